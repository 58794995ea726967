// The programs a model writes for the code view's `execute` in the code-mode benchmark's tasks
// (bench/lib/code-tasks.ts), as real functions so a syntax error shows at once; their source text is what is sent.
// Plain JavaScript as a model writes it, so not type-checked: each namespace (circleci, github, …) is a variable the
// sandbox defines, and every value is what a tool returned.
// @ts-nocheck

export const PROGRAMS = {
  ciFailures: async () => {
    const followed = await circleci.list_followed_projects({ params: {} });
    const slugs = [...followed.matchAll(/projectSlug: (\S+)/g)].map((m) => m[1]);
    const latest = await Promise.all(slugs.map((projectSlug) => circleci.get_latest_pipeline_status({ params: { projectSlug, branch: "main" } })));
    const failed = slugs
      .map((slug, i) => ({ slug, text: latest[i] }))
      .filter((p) => /^Status: failed$/m.test(p.text))
      .map((p) => ({ slug: p.slug, workflow: /^Workflow: (.+)$/m.exec(p.text)[1], created: /^Created: (.+)$/m.exec(p.text)[1] }));
    const recent = failed.sort((a, b) => b.created.localeCompare(a.created)).slice(0, 3);
    console.log(`${failed.length} of ${slugs.length} projects failed on main; opening issues for ${recent.map((f) => f.slug).join(", ")}`);
    const logs = await Promise.all(recent.map((f) => circleci.get_build_failure_logs({ params: { projectSlug: f.slug, branch: "main" } })));
    const issues = await Promise.all(
      recent.map((f, i) => {
        const job = /^Job logs for (\S+)/m.exec(logs[i])[1];
        const errors = logs[i].split("\n").filter((line) => /FAIL|Error|●|Expected|Received/.test(line)).slice(0, 8);
        const repo = f.slug.split("/")[2];
        return github.create_issue({
          owner: "acme",
          repo,
          title: `CI failing on main: ${repo} ${f.workflow}/${job}`,
          body: `The latest main pipeline of ${f.slug} failed (workflow ${f.workflow}, created ${f.created}).\n\n\`\`\`\n${errors.join("\n")}\n\`\`\``,
          labels: ["ci-failure"],
        });
      }),
    );
    return issues.map((issue) => ({ number: issue.number, url: issue.html_url }));
  },

  memoryMigration: async () => {
    const graph = await memory.read_graph({});
    const services = graph.relations.filter((r) => r.to === "payments-db" && r.relationType === "depends_on").map((r) => r.from);
    const owners = new Map();
    for (const r of graph.relations) {
      if (r.relationType === "owned_by" && services.includes(r.from)) owners.set(r.to, [...(owners.get(r.to) ?? []), r.from]);
    }
    const migration = "payments-db Postgres 17 migration";
    const note = "payments-db moves from Postgres 14 to Postgres 17 on 2026-12-01 (read-only window 06:00-06:30 UTC)";
    await Promise.all([
      memory.create_entities({ entities: [{ name: migration, entityType: "migration", observations: [note] }] }),
      memory.add_observations({
        observations: [
          ...services.map((s) => ({ entityName: s, contents: [`Depends on payments-db: ${note}`] })),
          ...[...owners].map(([person, owned]) => ({ entityName: person, contents: [`Owns ${owned.join(", ")}, affected by the payments-db Postgres 17 migration on 2026-12-01`] })),
        ],
      }),
      memory.create_relations({ relations: services.map((s) => ({ from: s, to: migration, relationType: "affected_by" })) }),
    ]);
    return { migration, services, owners: [...owners.keys()] };
  },

  fsSummary: async () => {
    const dir = "/work/app/docs";
    const listing = await filesystem.list_directory_with_sizes({ path: dir, sortBy: "size" });
    const largest = listing.content
      .split("\n")
      .map((line) => /^\[FILE\] (\S+)\s+(\S+ \S+)$/.exec(line))
      .filter((m) => m !== null)
      .slice(0, 3);
    const files = await Promise.all(largest.map((m) => filesystem.read_text_file({ path: `${dir}/${m[1]}` })));
    const rows = largest.map((m, i) => {
      const text = files[i].content;
      const heading = /^#+ (.+)$/m.exec(text)?.[1] ?? "(none)";
      return `| ${m[1]} | ${m[2]} | ${text.split("\n").length} | ${heading} | ${(text.match(/TODO/g) ?? []).length} |`;
    });
    const content = ["# The three largest docs", "", "| file | size | lines | first heading | TODOs |", "| --- | --: | --: | --- | --: |", ...rows, ""].join("\n");
    await filesystem.write_file({ path: `${dir}/SUMMARY.md`, content });
    return { written: `${dir}/SUMMARY.md`, files: largest.map((m) => m[1]) };
  },

  sentryTriage: async () => {
    const found = await sentry.search_issues({ organizationSlug: "acme", projectSlugOrId: "checkout", query: "is:unresolved", sort: "freq", period: "24h", limit: 10 });
    const top = found
      .split(/^## \d+\. /m)
      .slice(1, 4)
      .map((block) => ({
        id: /^\[([A-Z0-9-]+)\]/.exec(block)[1],
        url: /\((https:[^)]+)\)/.exec(block)[1],
        title: /^\*\*(.+)\*\*$/m.exec(block)[1],
        culprit: /\*\*Culprit\*\*: (.+)/.exec(block)[1],
        events: /\*\*Events\*\*: (\d+)/.exec(block)[1],
        users: /\*\*Users\*\*: (\d+)/.exec(block)[1],
      }));
    const done = await Promise.all(
      top.flatMap((issue) => [
        gitlab.create_issue({
          project_id: "acme/checkout",
          title: `[Sentry ${issue.id}] ${issue.title}`,
          description: `${issue.events} events, ${issue.users} users in the last 24 hours.\n\nCulprit: ${issue.culprit}\nSentry: ${issue.url}`,
          labels: ["sentry", "bug"],
        }),
        sentry.update_issue({ organizationSlug: "acme", issueId: issue.id, assignedTo: "team:checkout" }),
      ]),
    );
    return top.map((issue, k) => ({ sentry: issue.id, gitlab: done[2 * k].web_url }));
  },
};
