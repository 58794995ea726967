// The code-mode benchmark's task set (bench/code-mode.ts): multi-step tasks on recorded corpus servers, each with the
// scripted answers its replay upstreams give, the program a model writes for the code view's `execute`, and the
// search queries that find the methods it calls. The meta and direct views' scripts are derived from the program
// (bench/lib/code-waves.ts): the same calls, in the same turns, with the same arguments.
import type { ScriptedAnswer, ScriptedResult } from "../../harness/replay-types.ts";
import { shortHash } from "../../src/catalog/direct-names.ts";
import { PROGRAMS } from "./code-programs.ts";
import { random } from "./random.ts";

export interface TaskServer {
  /** The server's name in the team config, so also its meta-view prefix, direct-view prefix and code namespace. */
  name: string;
  /** The corpus file (shared/corpus/servers/<file>.json). */
  file: string;
  /** Scripted answers by tool name; the route's other tools echo. */
  answers: Record<string, ScriptedAnswer>;
}

export interface CodeTask {
  id: string;
  /** What the user asks, in one or two sentences. */
  prompt: string;
  servers: TaskServer[];
  /** The program a model writes for `execute`: an async arrow function, each server a namespace variable. */
  program: string;
  /** The code view's `search` query for each method the program calls (`namespace.method` → query). */
  searches: Record<string, string>;
}

const textResult = (text: string): ScriptedResult => ({ content: [{ type: "text", text }] });
/** A structured result whose text is the same object as indented JSON (the reference servers answer so). */
const structured = (value: Record<string, unknown>, text = JSON.stringify(value, null, 2)): ScriptedResult => ({
  content: [{ type: "text", text }],
  structuredContent: value,
});
const str = (v: unknown): string => (typeof v === "string" ? v : "");
/** A number from 100 to 999 that depends only on the text: an issue number derived from a call's arguments. */
const numberOf = (text: string): number => 100 + (parseInt(shortHash(text), 16) % 900);

// ---------------------------------------------------------------------------------------------------------------
// 1. CircleCI → GitHub: the three most recent failed pipelines, one issue each.

interface CiProject {
  repo: string;
  status: "failed" | "success";
  created: string;
  workflow: string;
  job: string;
  /** How the failing step reports: a jest run or a terraform plan. */
  kind: "jest" | "terraform";
  /** The lines that say what broke, amid the log's noise. */
  failure: string[];
  /** Test files (jest) or modules (terraform) that went through before the failure. */
  passing: string[];
}

const CI_PROJECTS: CiProject[] = [
  {
    repo: "web",
    status: "failed",
    created: "2026-11-24T09:12:40.512Z",
    workflow: "build-and-test",
    job: "unit-tests",
    kind: "jest",
    failure: [
      "FAIL src/cart/total.test.ts (2.311 s)",
      "  ● cart total › applies the percentage discount after tax",
      "",
      "    expect(received).toBe(expected) // Object.is equality",
      "",
      "    Expected: 90",
      "    Received: 100",
      "",
      "      40 |   it(\"applies the percentage discount after tax\", () => {",
      "      41 |     const cart = cartWith([{ price: 100, qty: 1 }], { discount: 10, tax: 0 });",
      "    > 42 |     expect(total(cart)).toBe(90);",
      "         |                         ^",
      "      43 |   });",
      "      44 |",
      "",
      "      at Object.<anonymous> (src/cart/total.test.ts:42:25)",
    ],
    passing: [
      "src/components/Header.test.tsx", "src/components/Footer.test.tsx", "src/components/ProductCard.test.tsx", "src/components/SearchBox.test.tsx",
      "src/components/CouponField.test.tsx", "src/components/EmptyState.test.tsx", "src/cart/storage.test.ts", "src/cart/merge.test.ts",
      "src/cart/shipping.test.ts", "src/i18n/prices.test.ts", "src/i18n/dates.test.ts", "src/hooks/useDebounce.test.ts",
      "src/hooks/useInfiniteScroll.test.ts", "src/catalog/sort.test.ts", "src/catalog/filter.test.ts", "src/api/client.test.ts",
      "src/api/retry.test.ts", "src/auth/session.test.ts", "src/auth/guard.test.tsx", "src/checkout/steps.test.tsx",
      "src/checkout/address.test.tsx", "src/checkout/payment.test.tsx", "src/analytics/events.test.ts", "src/utils/money.test.ts",
    ],
  },
  {
    repo: "api",
    status: "failed",
    created: "2026-11-24T11:47:05.031Z",
    workflow: "test",
    job: "integration",
    kind: "jest",
    failure: [
      "FAIL test/integration/orders.test.ts (10.418 s)",
      "  ● orders › creates an order and reserves stock",
      "",
      "    Error: connect ECONNREFUSED 127.0.0.1:5432",
      "",
      "      at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16)",
      "      at Pool.connect (node_modules/pg-pool/index.js:45:11)",
      "      at createOrder (src/orders/create.ts:31:18)",
      "",
      "  ● orders › cancels an order and releases stock",
      "",
      "    Error: connect ECONNREFUSED 127.0.0.1:5432",
      "",
      "      at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16)",
      "      at Pool.connect (node_modules/pg-pool/index.js:45:11)",
      "      at cancelOrder (src/orders/cancel.ts:22:18)",
    ],
    passing: [
      "test/integration/products.test.ts", "test/integration/search.test.ts", "test/integration/auth.test.ts", "test/integration/tokens.test.ts",
      "test/integration/webhooks.test.ts", "test/integration/rate-limit.test.ts", "test/integration/export.test.ts", "test/integration/health.test.ts",
      "test/unit/validate.test.ts", "test/unit/pagination.test.ts", "test/unit/errors.test.ts", "test/unit/money.test.ts",
      "test/unit/signature.test.ts", "test/unit/config.test.ts", "test/unit/logger.test.ts", "test/unit/ids.test.ts",
    ],
  },
  {
    repo: "mobile",
    status: "success",
    created: "2026-11-24T10:03:22.870Z",
    workflow: "build",
    job: "android",
    kind: "jest",
    failure: [],
    passing: [],
  },
  {
    repo: "billing",
    status: "failed",
    created: "2026-11-23T16:30:51.204Z",
    workflow: "test",
    job: "unit",
    kind: "jest",
    failure: ["FAIL test/invoice.test.ts (1.902 s)", "  ● invoice › rounds VAT per line", "", "    Expected: 19.99", "    Received: 20", "", "      at Object.<anonymous> (test/invoice.test.ts:88:31)"],
    passing: ["test/draft.test.ts", "test/credit-note.test.ts", "test/reminder.test.ts", "test/currency.test.ts", "test/pdf.test.ts", "test/ledger.test.ts"],
  },
  {
    repo: "infra",
    status: "failed",
    created: "2026-11-24T07:55:18.466Z",
    workflow: "plan",
    job: "terraform-plan",
    kind: "terraform",
    failure: [
      "╷",
      "│ Error: Unsupported argument",
      "│",
      '│   on modules/cdn/main.tf line 27, in resource "aws_cloudfront_distribution" "site":',
      "│   27:   http3_enabled = true",
      "│",
      '│ An argument named "http3_enabled" is not expected here. Did you mean "is_ipv6_enabled"?',
      "╵",
    ],
    passing: [
      "module.vpc.aws_vpc.main", "module.vpc.aws_subnet.private[0]", "module.vpc.aws_subnet.private[1]", "module.vpc.aws_subnet.private[2]",
      "module.vpc.aws_subnet.public[0]", "module.vpc.aws_subnet.public[1]", "module.vpc.aws_nat_gateway.main", "module.vpc.aws_route_table.private",
      "module.dns.aws_route53_zone.main", "module.dns.aws_route53_record.api", "module.dns.aws_route53_record.www", "module.queues.aws_sqs_queue.orders",
      "module.queues.aws_sqs_queue.orders_dlq", "module.queues.aws_sqs_queue.emails", "module.buckets.aws_s3_bucket.assets", "module.buckets.aws_s3_bucket.logs",
      "module.buckets.aws_s3_bucket_policy.assets", "module.cdn.aws_cloudfront_origin_access_control.site", "module.cdn.aws_acm_certificate.site",
      "module.db.aws_db_subnet_group.main", "module.db.aws_db_parameter_group.pg14", "module.db.aws_db_instance.payments", "module.iam.aws_iam_role.ci",
      "module.iam.aws_iam_role_policy.ci", "module.iam.aws_iam_openid_connect_provider.circleci",
    ],
  },
];

const ciSlug = (p: CiProject) => `gh/acme/${p.repo}`;

function ciStatus(p: CiProject): string {
  const minutes = (iso: string, add: number) => new Date(Date.parse(iso) + add * 60_000).toISOString();
  const deploy = p.status === "failed" ? "not_run" : "success";
  return [
    "---",
    `Workflow: ${p.workflow}`,
    `Status: ${p.status}`,
    `Created: ${p.created}`,
    `Stopped: ${minutes(p.created, 7)}`,
    "---",
    "Workflow: deploy",
    `Status: ${deploy}`,
    `Created: ${p.created}`,
    `Stopped: ${minutes(p.created, deploy === "success" ? 12 : 7)}`,
  ].join("\n");
}

/** The failing step's output: a jest run (a PASS line per test file, then the failure) or a terraform plan. */
function failingStep(p: CiProject): string[] {
  if (p.kind === "terraform") {
    return [
      "$ terraform init -input=false",
      "Initializing the backend...",
      'Successfully configured the backend "s3"! Terraform will automatically use this backend unless the backend configuration changes.',
      "Initializing modules...",
      "Initializing provider plugins...",
      '- Reusing previous version of hashicorp/aws from the dependency lock file',
      "- Using previously-installed hashicorp/aws v5.82.2",
      "Terraform has been successfully initialized!",
      "$ terraform plan -input=false -lock-timeout=5m -out=tfplan",
      ...p.passing.map((r, i) => `${r}: Refreshing state... [id=${shortHash(r)}${i}]`),
      "",
      "Planning failed. Terraform encountered an error while generating this plan.",
      "",
      ...p.failure,
    ];
  }
  const next = random(numberOf(p.repo));
  const suites = p.passing.length + 1;
  const tests = p.passing.length * 9 + 7;
  const failed = p.failure.filter((l) => l.includes("●")).length;
  return [
    "$ npm test -- --ci --reporters=default --reporters=jest-junit",
    "",
    `> ${p.repo}@3.14.0 test`,
    "> jest --ci --reporters=default --reporters=jest-junit",
    "",
    ...p.passing.map((f) => `PASS ${f} (${(0.4 + next() * 3).toFixed(3)} s)`),
    ...p.failure,
    "",
    `Test Suites: 1 failed, ${suites - 1} passed, ${suites} total`,
    `Tests:       ${failed} failed, ${tests - failed} passed, ${tests} total`,
    "Snapshots:   14 passed, 14 total",
    `Time:        ${(20 + next() * 40).toFixed(3)} s`,
    "Ran all test suites.",
  ];
}

/** A failed job's log: environment, checkout, cache and install noise, then the failing step. */
function ciLog(p: CiProject): string {
  const job = 4800 + numberOf(p.repo);
  const lines = [
    `Job logs for ${p.job} (job #${job}, ${ciSlug(p)}, branch main):`,
    "Step: Spin up environment",
    "Build-agent version 1.0.281561-6f6d0f3d (2026-11-20T10:14:52+0000)",
    "System information:",
    " Server Version: 27.3.1",
    " Storage Driver: overlay2",
    " Kernel Version: 6.8.0-1017-aws",
    " Operating System: Ubuntu 22.04.5 LTS",
    " Architecture: x86_64",
    `Starting container cimg/${p.kind === "terraform" ? "deploy:2026.09" : "node:22.11"}`,
    "  using image cimg/node@sha256:4f9c1a7e0b2d8c3e6a5f7b9d1c0e2a4b6c8d0e1f3a5b7c9d0e2f4a6b8c0d1e2f",
    "Step: Preparing environment variables",
    "Using build environment variables:",
    "  BASH_ENV=/tmp/.bash_env-6740c2a1",
    "  CI=true",
    "  CIRCLECI=true",
    "  CIRCLE_BRANCH=main",
    `  CIRCLE_BUILD_NUM=${job}`,
    `  CIRCLE_BUILD_URL=https://circleci.com/gh/acme/${p.repo}/${job}`,
    `  CIRCLE_JOB=${p.job}`,
    "  CIRCLE_NODE_INDEX=0",
    "  CIRCLE_NODE_TOTAL=1",
    "  CIRCLE_PROJECT_USERNAME=acme",
    `  CIRCLE_PROJECT_REPONAME=${p.repo}`,
    `  CIRCLE_REPOSITORY_URL=git@github.com:acme/${p.repo}.git`,
    "  CIRCLE_SHA1=3f9c2ab7d41e0c5b8a9f6e2d1c0b7a4e5f3d2c1b",
    "  CIRCLE_WORKING_DIRECTORY=~/project",
    "Using environment variables from project settings and/or contexts:",
    "  NPM_TOKEN=**REDACTED**",
    "  AWS_ROLE_ARN=**REDACTED**",
    "Step: Checkout code",
    "Using SSH Config Dir '/home/circleci/.ssh'",
    `Cloning git repository - git@github.com:acme/${p.repo}.git`,
    "Cloning into '.'...",
    "Warning: Permanently added the ECDSA host key for IP address '140.82.113.4' to the list of known hosts.",
    "Checking out branch",
    `HEAD is now at 3f9c2ab Merge pull request #${numberOf(`${p.repo}-pr`)} from acme/renovate/all-minor-patch`,
    "Step: Restoring cache",
    'Found a cache from build 4791 at v3-deps-{{ checksum "package-lock.json" }}',
    "Size: 212 MiB",
    "Cached paths:",
    "  * /home/circleci/.npm",
    "Downloading cache archive...",
    "Validating cache...",
    "Unarchiving cache...",
    "Step: Install dependencies",
    "$ npm ci --no-audit --prefer-offline",
    "npm warn deprecated inflight@1.0.6: This module is not supported, and leaks memory. Do not use it.",
    "npm warn deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported",
    "npm warn deprecated rimraf@3.0.2: Rimraf versions prior to v4 are no longer supported",
    "npm warn deprecated domexception@4.0.0: Use your platform's native DOMException instead",
    "added 1187 packages in 21s",
    "214 packages are looking for funding",
    "  run `npm fund` for details",
    `Step: ${p.job}`,
    ...failingStep(p),
    "",
    "Exited with code exit status 1",
    "Step: Uploading test results",
    "Archiving the following test results",
    "  * /home/circleci/project/reports/junit.xml",
    "Uploaded",
    "Step: Uploading artifacts",
    "Uploading /home/circleci/project/coverage to coverage",
    "Uploading /home/circleci/project/coverage/lcov.info (88 kB): DONE",
    "Uploading /home/circleci/project/coverage/index.html (31 kB): DONE",
  ];
  return lines.join("\n");
}

function ciProject(args: Record<string, unknown>): CiProject {
  const params = (args.params ?? {}) as Record<string, unknown>;
  const found = CI_PROJECTS.find((p) => ciSlug(p) === params.projectSlug);
  if (!found || params.branch !== "main") throw new Error(`No pipeline found for project ${str(params.projectSlug)} on branch ${str(params.branch)}`);
  return found;
}

function githubIssue(args: Record<string, unknown>): Record<string, unknown> {
  const owner = str(args.owner);
  const repo = str(args.repo);
  const number = numberOf(`${owner}/${repo}#${str(args.title)}`);
  const api = `https://api.github.com/repos/${owner}/${repo}`;
  const user = "https://api.github.com/users/acme-bot";
  return {
    url: `${api}/issues/${number}`,
    repository_url: api,
    labels_url: `${api}/issues/${number}/labels{/name}`,
    comments_url: `${api}/issues/${number}/comments`,
    events_url: `${api}/issues/${number}/events`,
    html_url: `https://github.com/${owner}/${repo}/issues/${number}`,
    id: 2_700_000_000 + number,
    node_id: `I_kwDOLm${shortHash(`${repo}${number}`)}`,
    number,
    title: str(args.title),
    user: {
      login: "acme-bot",
      id: 91344021,
      node_id: "U_kgDOBXHxlQ",
      avatar_url: "https://avatars.githubusercontent.com/u/91344021?v=4",
      gravatar_id: "",
      url: user,
      html_url: "https://github.com/acme-bot",
      followers_url: `${user}/followers`,
      following_url: `${user}/following{/other_user}`,
      gists_url: `${user}/gists{/gist_id}`,
      starred_url: `${user}/starred{/owner}{/repo}`,
      subscriptions_url: `${user}/subscriptions`,
      organizations_url: `${user}/orgs`,
      repos_url: `${user}/repos`,
      events_url: `${user}/events{/privacy}`,
      received_events_url: `${user}/received_events`,
      type: "User",
      user_view_type: "public",
      site_admin: false,
    },
    labels: ((args.labels ?? []) as string[]).map((name) => ({
      id: 7_100_000_000 + numberOf(name),
      node_id: `LA_kwDOLm${shortHash(name)}`,
      url: `${api}/labels/${name}`,
      name,
      color: "d73a4a",
      default: false,
      description: null,
    })),
    state: "open",
    locked: false,
    assignee: null,
    assignees: [],
    milestone: null,
    comments: 0,
    created_at: "2026-11-24T12:30:07Z",
    updated_at: "2026-11-24T12:30:07Z",
    closed_at: null,
    author_association: "MEMBER",
    type: null,
    active_lock_reason: null,
    sub_issues_summary: { total: 0, completed: 0, percent_completed: 0 },
    body: args.body ?? null,
    closed_by: null,
    reactions: { url: `${api}/issues/${number}/reactions`, total_count: 0, "+1": 0, "-1": 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 },
    timeline_url: `${api}/issues/${number}/timeline`,
    performed_via_github_app: null,
    state_reason: null,
  };
}

const ciFailures: CodeTask = {
  id: "ci-failures",
  prompt: "Find the three most recent failed CircleCI pipelines on main across the projects I follow, and open a GitHub issue for each with what failed.",
  servers: [
    {
      name: "circleci",
      file: "circleci__mcp-server-circleci",
      answers: {
        list_followed_projects: textResult(
          ["Projects followed:", ...CI_PROJECTS.map((p, i) => `${i + 1}. ${p.repo}\n  projectSlug: ${ciSlug(p)}`)].join("\n"),
        ),
        get_latest_pipeline_status: (args) => textResult(ciStatus(ciProject(args))),
        get_build_failure_logs: (args) => {
          const p = ciProject(args);
          if (p.status !== "failed") throw new Error(`No failed jobs found in the latest pipeline of ${ciSlug(p)} on main`);
          return textResult(ciLog(p));
        },
      },
    },
    {
      name: "github",
      file: "modelcontextprotocol__server-github",
      answers: { create_issue: (args) => textResult(JSON.stringify(githubIssue(args), null, 2)) },
    },
  ],
  program: PROGRAMS.ciFailures.toString(),
  searches: {
    "circleci.list_followed_projects": "projects I follow on CircleCI",
    "circleci.get_latest_pipeline_status": "latest pipeline status of a branch",
    "circleci.get_build_failure_logs": "logs of a failed build",
    "github.create_issue": "create a GitHub issue",
  },
};

// ---------------------------------------------------------------------------------------------------------------
// 2. Memory: a database migration noted on every service that depends on it and on their owners.

const PEOPLE = [
  ["Ana Ruiz", "Staff engineer on the payments team; on call the first week of each month", "Prefers written design docs over meetings"],
  ["Ben Okafor", "Engineering manager of the payments team", "Approves production database changes"],
  ["Chen Li", "Senior engineer on the orders team", "Wrote the stock reservation logic", "Based in Singapore (UTC+8)"],
  ["Dara Novak", "Site reliability engineer", "Owns the Postgres fleet and its upgrade runbooks"],
  ["Eli Moreau", "Engineer on the growth team", "Maintains the search and recommendation services"],
  ["Fatima Haddad", "Finance systems lead", "Needs two weeks' notice before any change to invoicing", "Reviews ledger reconciliations every Monday"],
  ["Goran Petrov", "Platform engineer", "Maintains the Kafka cluster and the event schemas"],
] as const;

const SERVICES = [
  { name: "checkout-api", owner: "Ana Ruiz", db: "payments-db", notes: ["Handles the checkout flow and payment intents", "Node 22, deployed on Kubernetes (3 replicas)", "p99 latency target 300 ms"] },
  { name: "orders-service", owner: "Chen Li", db: "payments-db", notes: ["Creates orders and reserves stock", "Publishes order events to events-kafka"] },
  { name: "invoice-worker", owner: "Fatima Haddad", db: "payments-db", notes: ["Generates invoices nightly at 02:00 UTC", "Retries failed PDF renders three times"] },
  { name: "refunds-service", owner: "Ana Ruiz", db: "payments-db", notes: ["Processes refunds and chargebacks", "Talks to Stripe through the payments gateway"] },
  { name: "ledger-sync", owner: "Fatima Haddad", db: "payments-db", notes: ["Copies settled payments to the accounting ledger every hour", "Written in Go"] },
  { name: "search-api", owner: "Eli Moreau", db: "catalog-db", notes: ["Full-text product search", "Reindexes the catalog every 15 minutes"] },
  { name: "catalog-service", owner: "Eli Moreau", db: "catalog-db", notes: ["Products, prices and availability", "Caches prices for 60 seconds"] },
  { name: "notifications", owner: "Goran Petrov", db: "events-kafka", notes: ["Sends e-mail and push notifications from order events", "Uses a dead-letter topic for failures"] },
  { name: "fraud-scorer", owner: "Ben Okafor", db: "events-kafka", notes: ["Scores payments for fraud in real time", "Model retrained weekly"] },
] as const;

const DATABASES = [
  ["payments-db", "Postgres 14 cluster with payments, refunds and invoices", "Primary in eu-west-1 with two replicas", "Nightly backups kept 35 days"],
  ["catalog-db", "Postgres 16 with products and prices", "Read replicas behind pgbouncer"],
  ["events-kafka", "Kafka cluster for domain events", "Retention 7 days"],
] as const;

function memoryGraph(): { entities: Array<{ name: string; entityType: string; observations: string[] }>; relations: Array<{ from: string; to: string; relationType: string }> } {
  const entities = [
    ...PEOPLE.map(([name, ...observations]) => ({ name, entityType: "person", observations })),
    ...SERVICES.map((s) => ({ name: s.name, entityType: "service", observations: [...s.notes] })),
    ...DATABASES.map(([name, ...observations]) => ({ name, entityType: "datastore", observations })),
    { name: "payments team", entityType: "team", observations: ["Owns everything that moves money", "Weekly planning on Tuesdays"] },
    { name: "growth team", entityType: "team", observations: ["Search, recommendations and experiments"] },
    { name: "platform team", entityType: "team", observations: ["Runs Kubernetes, Kafka and the databases"] },
    { name: "Q4 freeze", entityType: "decision", observations: ["No production changes from 2026-12-18 to 2027-01-04", "Exceptions need Ben Okafor's approval"] },
  ];
  const teamOf: Record<string, string> = {
    "Ana Ruiz": "payments team",
    "Ben Okafor": "payments team",
    "Chen Li": "payments team",
    "Fatima Haddad": "payments team",
    "Eli Moreau": "growth team",
    "Dara Novak": "platform team",
    "Goran Petrov": "platform team",
  };
  const relations = [
    ...SERVICES.flatMap((s) => [
      { from: s.name, to: s.db, relationType: "depends_on" },
      { from: s.name, to: s.owner, relationType: "owned_by" },
    ]),
    { from: "orders-service", to: "events-kafka", relationType: "publishes_to" },
    { from: "notifications", to: "orders-service", relationType: "consumes_events_of" },
    ...Object.entries(teamOf).map(([person, team]) => ({ from: person, to: team, relationType: "member_of" })),
    { from: "payments-db", to: "Dara Novak", relationType: "administered_by" },
    { from: "catalog-db", to: "Dara Novak", relationType: "administered_by" },
    { from: "events-kafka", to: "Goran Petrov", relationType: "administered_by" },
  ];
  return { entities, relations };
}

const memoryMigration: CodeTask = {
  id: "memory-migration",
  prompt:
    "payments-db moves to Postgres 17 on 2026-12-01: note it on every service that depends on payments-db and on each of their owners, and record the migration as an entity linked to those services.",
  servers: [
    {
      name: "memory",
      file: "modelcontextprotocol__server-memory",
      answers: {
        read_graph: () => structured(memoryGraph()),
        create_entities: (args) => structured({ entities: args.entities as unknown[] }),
        create_relations: (args) => structured({ relations: args.relations as unknown[] }),
        add_observations: (args) => {
          const known = new Set(memoryGraph().entities.map((e) => e.name));
          const given = (args.observations ?? []) as Array<{ entityName: string; contents: string[] }>;
          const missing = given.find((o) => !known.has(o.entityName));
          if (missing) throw new Error(`Entity with name ${missing.entityName} not found`);
          return structured({ results: given.map((o) => ({ entityName: o.entityName, addedObservations: o.contents })) });
        },
      },
    },
  ],
  program: PROGRAMS.memoryMigration.toString(),
  searches: {
    "memory.read_graph": "read the whole knowledge graph",
    "memory.create_entities": "create entities in the knowledge graph",
    "memory.add_observations": "add observations to entities",
    "memory.create_relations": "create relations between entities",
  },
};

// ---------------------------------------------------------------------------------------------------------------
// 3. Filesystem: the three largest files of a folder read, a summary file written.

const DOCS_DIR = "/work/app/docs";

const SENTENCES = [
  "The checkout flow talks to the payments gateway through a single idempotent endpoint.",
  "Every request carries a correlation id that the gateway echoes in its logs.",
  "Retries use exponential backoff with jitter, capped at thirty seconds.",
  "Configuration comes from environment variables first and from the settings file second.",
  "A feature flag guards every change that touches money.",
  "The orders service owns stock reservations and releases them after fifteen minutes.",
  "Background jobs run on a separate queue so that user requests are never starved.",
  "Database migrations are applied by the deploy pipeline before new pods start.",
  "Each service exposes health, readiness and metrics endpoints on its admin port.",
  "Logs are structured JSON, one event per line, with no personal data.",
  "The staging environment mirrors production except for the payment provider, which runs in test mode.",
  "Alerts page the on-call engineer only for symptoms that users notice.",
  "Dashboards show the four golden signals for every public endpoint.",
  "Secrets live in the vault and are mounted as files, never as environment variables.",
  "Pull requests need one review, and two for anything under the payments directory.",
  "Load tests run every night against staging and post their results to the team channel.",
  "The API is versioned in the URL, and old versions are kept for twelve months.",
  "Webhooks are signed with HMAC-SHA256 and must be verified before they are parsed.",
  "Caches are invalidated by events rather than by time wherever that is possible.",
  "Rollbacks are a redeploy of the previous image; database changes must stay backward compatible for one release.",
];

function docFile(title: string, seed: number, sections: number): string {
  const next = random(seed);
  const pick = () => SENTENCES[Math.floor(next() * SENTENCES.length)]!;
  const out = [`# ${title}`, "", `${pick()} ${pick()}`, ""];
  for (let s = 1; s <= sections; s++) {
    out.push(`## ${title.split(" ")[0]} part ${s}`, "");
    for (let p = 0; p < 3; p++) out.push(Array.from({ length: 3 + Math.floor(next() * 3) }, pick).join(" "), "");
    if (next() < 0.5) out.push("- " + pick(), "- " + pick(), "- " + pick(), "");
    if (next() < 0.35) out.push(`TODO: ${pick().toLowerCase()}`, "");
    if (next() < 0.3) out.push("```sh", `curl -s https://api.acme.test/v2/health | jq .status`, "```", "");
  }
  return out.join("\n");
}

const DOCS: Record<string, string> = {
  "architecture.md": docFile("Architecture overview", 11, 8),
  "api-guide.md": docFile("API guide", 12, 7),
  "deployment.md": docFile("Deployment and rollbacks", 13, 6),
  "onboarding.md": docFile("Onboarding", 14, 3),
  "faq.md": docFile("FAQ", 15, 2),
  "glossary.md": docFile("Glossary", 16, 2),
  "CHANGELOG.md": docFile("Changelog", 17, 1),
};
const DOC_DIRS = ["adr", "images", "runbooks"];

function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  return `${(bytes / 1024).toFixed(2)} KB`;
}

function listingBySize(): string {
  const files = Object.entries(DOCS)
    .map(([name, text]) => ({ name, bytes: Buffer.byteLength(text) }))
    .sort((a, b) => b.bytes - a.bytes);
  const total = files.reduce((n, f) => n + f.bytes, 0);
  return [
    ...files.map((f) => `[FILE] ${f.name.padEnd(30)} ${sizeOf(f.bytes).padStart(10)}`),
    ...DOC_DIRS.map((d) => `[DIR]  ${d}`),
    "",
    `Total: ${files.length} files, ${DOC_DIRS.length} directories`,
    `Combined size: ${sizeOf(total)}`,
  ].join("\n");
}

const fsSummary: CodeTask = {
  id: "fs-summary",
  prompt: `In ${DOCS_DIR}, read the three largest files and write SUMMARY.md there: each file's size, line count, first heading and number of TODOs.`,
  servers: [
    {
      name: "filesystem",
      file: "modelcontextprotocol__server-filesystem",
      answers: {
        list_directory_with_sizes: (args) => {
          if (args.path !== DOCS_DIR) throw new Error(`Error: ENOENT: no such file or directory, scandir '${str(args.path)}'`);
          const text = listingBySize();
          return structured({ content: text }, text);
        },
        read_text_file: (args) => {
          const path = str(args.path);
          const text = path.startsWith(`${DOCS_DIR}/`) ? DOCS[path.slice(DOCS_DIR.length + 1)] : undefined;
          if (text === undefined) throw new Error(`Error: ENOENT: no such file or directory, open '${path}'`);
          return structured({ content: text }, text);
        },
        write_file: (args) => {
          const text = `Successfully wrote to ${str(args.path)}`;
          return structured({ content: text }, text);
        },
      },
    },
  ],
  program: PROGRAMS.fsSummary.toString(),
  searches: {
    "filesystem.list_directory_with_sizes": "list a directory with file sizes",
    "filesystem.read_text_file": "read a text file",
    "filesystem.write_file": "write a file",
  },
};

// ---------------------------------------------------------------------------------------------------------------
// 4. Sentry → GitLab: the three most frequent unresolved errors filed as GitLab issues and assigned in Sentry.

const SENTRY_ISSUES = [
  { id: "CHECKOUT-3K2", title: "TypeError: Cannot read properties of undefined (reading 'total')", culprit: "src/cart/summary.ts in computeTotal", events: 1204, users: 341, first: "2026-11-20T08:14:02Z" },
  { id: "CHECKOUT-3JX", title: "PaymentIntentError: card_declined (insufficient_funds) was not handled", culprit: "src/payments/confirm.ts in confirmPayment", events: 887, users: 402, first: "2026-11-02T17:40:11Z" },
  { id: "CHECKOUT-3M0", title: "TimeoutError: POST https://gateway.acme.internal/v2/intents exceeded 10000 ms", culprit: "src/payments/gateway.ts in post", events: 513, users: 198, first: "2026-11-23T22:05:47Z" },
  { id: "CHECKOUT-3HF", title: "RangeError: Invalid currency code: undefined", culprit: "src/i18n/money.ts in formatMoney", events: 240, users: 97, first: "2026-10-29T09:30:00Z" },
  { id: "CHECKOUT-3LQ", title: "ChunkLoadError: Loading chunk 812 failed", culprit: "webpack/runtime/jsonp chunk loading", events: 133, users: 120, first: "2026-11-21T13:12:45Z" },
  { id: "CHECKOUT-3KA", title: "SyntaxError: Unexpected token '<' in JSON at position 0", culprit: "src/api/client.ts in parseBody", events: 61, users: 33, first: "2026-11-18T06:55:19Z" },
  { id: "CHECKOUT-3GZ", title: "Warning: Each child in a list should have a unique \"key\" prop", culprit: "src/cart/CartList.tsx in CartList", events: 12, users: 9, first: "2026-10-14T11:01:36Z" },
];

const sentryUrl = (id: string) => `https://acme.sentry.io/issues/${id}`;

function sentrySearch(args: Record<string, unknown>): string {
  if (args.organizationSlug !== "acme") throw new Error(`Organization ${str(args.organizationSlug)} not found`);
  const limit = typeof args.limit === "number" ? args.limit : 10;
  const shown = SENTRY_ISSUES.slice(0, limit);
  return [
    `# Issues in **acme/${str(args.projectSlugOrId) || "all projects"}**`,
    "",
    `Query: \`${str(args.query) || "is:unresolved"}\` · sorted by ${str(args.sort) || "date"} · last ${str(args.period) || "30d"} · ${shown.length} results`,
    "",
    ...shown.flatMap((issue, i) => [
      `## ${i + 1}. [${issue.id}](${sentryUrl(issue.id)})`,
      "",
      `**${issue.title}**`,
      "",
      `- **Culprit**: ${issue.culprit}`,
      "- **Status**: unresolved",
      "- **Level**: error",
      `- **Events**: ${issue.events}`,
      `- **Users**: ${issue.users}`,
      `- **First seen**: ${issue.first}`,
      "- **Last seen**: 2026-11-24T12:01:44Z",
      "- **Assigned to**: unassigned",
      "",
    ]),
    "# Using this information",
    "",
    "- Use `get_sentry_resource(url='<issue url>')` for the details and latest event of an issue.",
    "- Use `update_issue` to resolve, ignore or assign an issue.",
  ].join("\n");
}

function gitlabIssue(args: Record<string, unknown>): Record<string, unknown> {
  const project = str(args.project_id);
  const iid = numberOf(`${project}#${str(args.title)}`);
  const api = `https://gitlab.com/api/v4/projects/4812`;
  return {
    id: 160_000_000 + iid,
    iid,
    project_id: 4812,
    title: str(args.title),
    description: args.description ?? null,
    state: "opened",
    created_at: "2026-11-24T12:31:10.402Z",
    updated_at: "2026-11-24T12:31:10.402Z",
    closed_at: null,
    closed_by: null,
    labels: args.labels ?? [],
    milestone: null,
    assignees: [],
    author: { id: 1873, username: "acme-bot", name: "Acme Bot", state: "active", locked: false, avatar_url: "https://gitlab.com/uploads/-/system/user/avatar/1873/avatar.png", web_url: "https://gitlab.com/acme-bot" },
    type: "ISSUE",
    assignee: null,
    user_notes_count: 0,
    merge_requests_count: 0,
    upvotes: 0,
    downvotes: 0,
    due_date: null,
    confidential: false,
    discussion_locked: null,
    issue_type: "issue",
    web_url: `https://gitlab.com/${project}/-/issues/${iid}`,
    time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
    task_completion_status: { count: 0, completed_count: 0 },
    weight: null,
    blocking_issues_count: 0,
    has_tasks: true,
    task_status: "0 of 0 checklist items completed",
    _links: {
      self: `${api}/issues/${iid}`,
      notes: `${api}/issues/${iid}/notes`,
      award_emoji: `${api}/issues/${iid}/award_emoji`,
      project: api,
      closed_as_duplicate_of: null,
    },
    references: { short: `#${iid}`, relative: `#${iid}`, full: `${project}#${iid}` },
    severity: "UNKNOWN",
    moved_to_id: null,
    imported: false,
    imported_from: "none",
    service_desk_reply_to: null,
  };
}

function sentryUpdate(args: Record<string, unknown>): string {
  const issue = SENTRY_ISSUES.find((i) => i.id === args.issueId);
  if (!issue || args.organizationSlug !== "acme") throw new Error(`Issue ${str(args.issueId)} not found in ${str(args.organizationSlug)}`);
  return [
    `# Issue ${issue.id} Updated in **acme**`,
    "",
    `**Issue**: ${issue.title}`,
    `**URL**: ${sentryUrl(issue.id)}`,
    "",
    "## Changes Made",
    "",
    `**Assigned To**: Unassigned → **${str(args.assignedTo)}**`,
    "",
    "## Current Status",
    "",
    "**Status**: unresolved",
    `**Assigned To**: ${str(args.assignedTo)}`,
    "",
    "# Using this information",
    "",
    `- The issue has been successfully updated in Sentry`,
    `- You can view the issue details using: get_sentry_resource(url='${sentryUrl(issue.id)}')`,
  ].join("\n");
}

const sentryTriage: CodeTask = {
  id: "sentry-triage",
  prompt:
    "Take the three unresolved Sentry issues of acme/checkout with the most events in the last 24 hours, open a GitLab issue in acme/checkout for each, and assign each Sentry issue to the checkout team.",
  servers: [
    {
      name: "sentry",
      file: "sentry__mcp-server",
      answers: {
        search_issues: (args) => textResult(sentrySearch(args)),
        update_issue: (args) => textResult(sentryUpdate(args)),
      },
    },
    {
      name: "gitlab",
      file: "zereight__mcp-gitlab",
      answers: { create_issue: (args) => textResult(JSON.stringify(gitlabIssue(args), null, 2)) },
    },
  ],
  program: PROGRAMS.sentryTriage.toString(),
  searches: {
    "sentry.search_issues": "search Sentry issues",
    "sentry.update_issue": "assign a Sentry issue",
    "gitlab.create_issue": "create a GitLab issue",
  },
};

export const CODE_TASKS: readonly CodeTask[] = [ciFailures, memoryMigration, fsSummary, sentryTriage];
