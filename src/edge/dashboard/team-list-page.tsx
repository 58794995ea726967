// The operator's team list, `/dashboard` once signed in: each team with a config, its servers, tokens and tool calls
// of the last week, each linking to its overview.
import { Layout } from "./layout.tsx";
import { LIST_DAYS, type TeamRow } from "./team-figures.ts";

export const teamPath = (team: string) => `/dashboard/teams/${encodeURIComponent(team)}`;

export function TeamListPage({ rows, csrf }: { rows: TeamRow[]; csrf: string }) {
  return (
    <Layout title="Teams" csrf={csrf}>
      {rows.length === 0 ? (
        <p>
          No team has a config yet. Store one with <code>npm run team -- put &lt;team&gt; &lt;config.json&gt;</code> or{" "}
          <code>PUT /admin/teams/&lt;team&gt;/config</code>.
        </p>
      ) : (
        <table class="teams">
          <caption>{`Every team on this proxy (${rows.length}); calls are upstream tool calls of the last ${LIST_DAYS} days.`}</caption>
          <thead>
            <tr>
              <th scope="col">Team</th>
              <th scope="col" class="num">Servers</th>
              <th scope="col" class="num">Tokens</th>
              <th scope="col" class="num">{`Calls (${LIST_DAYS} days)`}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr data-team={row.team}>
                <th scope="row">
                  <a href={teamPath(row.team)}>{row.team}</a>
                </th>
                <td class="num" data-servers={row.servers ?? ""}>
                  {row.servers === undefined ? "config invalid" : row.servers}
                </td>
                <td class="num" data-tokens={row.tokens}>
                  {row.tokens}
                </td>
                <td class="num" data-calls={row.calls}>
                  {row.calls}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Layout>
  );
}
