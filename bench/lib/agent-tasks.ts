// The agent-path benchmark's team and tasks (bench/agent-path.ts): twelve recorded corpus servers, four of them lazy,
// and tasks written as a user would ask them, never naming the tool. What the scripted agent may read of a task is
// its prompt, its steps' requests and the values the user gave; `expect` is only for checking the upstream calls.
import { CORPUS_SERVERS } from "../tokens.ts";

/** A server of the team: its name there, its corpus file, lazy or not (a lazy one carries its bench description). */
export interface TeamServer {
  name: string;
  file: string;
  lazy: boolean;
}

const LAZY = new Set(["gitlab", "azure-devops", "stripe", "sentry"]);
const EAGER = ["github", "memory", "google-maps", "kubernetes", "postgres", "context7", "brave-search", "circleci"];

export const AGENT_TEAM: readonly TeamServer[] = [...EAGER, ...LAZY].map((name) => {
  const server = CORPUS_SERVERS.find((s) => s.name === name);
  if (server === undefined) throw new Error(`no corpus server named ${name} in bench/tokens.ts`);
  return { name, file: server.file, lazy: LAZY.has(name) };
});

/** One step of a task: what the user wants done, in their words; and (for checking only) the calls that do it. */
export interface TaskStep {
  /** The step as the agent would put it to a search: the user's words, not a tool's name. */
  ask: string;
  /** Checking only: any of these `server/tool`s, called with at least these arguments (schema-typed). */
  expect: { tools: string[]; args: Record<string, unknown> };
}

export interface AgentTask {
  id: string;
  /** What the user says. */
  prompt: string;
  /** The values the user gave, by the words they used for them. */
  given: Record<string, string | number>;
  steps: TaskStep[];
}

const step = (ask: string, tools: string[], args: Record<string, unknown>): TaskStep => ({ ask, expect: { tools, args } });

export const AGENT_TASKS: readonly AgentTask[] = [
  {
    id: "gl-mr-files",
    prompt: "Which files does merge request 42 in acme/web on GitLab touch?",
    given: { project: "acme/web", "merge request": "42" },
    steps: [step("files changed in a merge request", ["gitlab/list_merge_request_changed_files", "gitlab/get_merge_request_diffs", "gitlab/list_merge_request_diffs"], { project_id: "acme/web", merge_request_iid: "42" })],
  },
  {
    id: "gl-issue-reply",
    prompt: "Read GitLab issue 7 in acme/web, then reply on it that the fix ships on Friday.",
    given: { project: "acme/web", issue: "7", comment: "The fix ships on Friday." },
    steps: [
      step("read one issue with its details", ["gitlab/get_issue"], { project_id: "acme/web", issue_iid: "7" }),
      step("reply with a comment on an issue", ["gitlab/create_issue_note", "gitlab/create_note"], { project_id: "acme/web" }),
    ],
  },
  {
    id: "gl-blame",
    prompt: "Who last changed each line of src/app.ts on the main branch of acme/web in GitLab?",
    given: { project: "acme/web", file: "src/app.ts", branch: "main" },
    steps: [step("who last changed each line of a file", ["gitlab/get_file_blame"], { project_id: "acme/web", file_path: "src/app.ts", ref: "main" })],
  },
  {
    id: "gl-triage",
    prompt: "On GitLab, list the issues of acme/web, read issue 9, and close it.",
    given: { project: "acme/web", issue: "9" },
    steps: [
      step("list the issues of a project", ["gitlab/list_issues"], { project_id: "acme/web" }),
      step("read one issue with its details", ["gitlab/get_issue"], { project_id: "acme/web", issue_iid: "9" }),
      step("change the state of an issue to closed", ["gitlab/update_issue"], { project_id: "acme/web", issue_iid: "9", state_event: "close" }),
    ],
  },
  {
    id: "ado-build-log",
    prompt: "Show me the log of build 5123 in the Fabrikam project on Azure DevOps.",
    given: { project: "Fabrikam", build: 5123 },
    steps: [step("read the log of a build", ["azure-devops/pipelines_build_log"], { project: "Fabrikam", buildId: 5123 })],
  },
  {
    id: "ado-status-note",
    prompt: "On Azure DevOps, check the status of build 5123 in Fabrikam, then add a comment to work item 881 that it is fixed.",
    given: { project: "Fabrikam", build: 5123, "work item": 881, comment: "Fixed by build 5123." },
    steps: [
      step("get a build's status", ["azure-devops/pipelines_build"], { project: "Fabrikam", buildId: 5123, action: "get_status" }),
      step("add a comment to a work item", ["azure-devops/wit_work_item_comment_write"], { project: "Fabrikam", workItemId: 881, action: "add" }),
    ],
  },
  {
    id: "ado-pr-threads",
    prompt: "What are reviewers saying on pull request 77 of the web repository in Fabrikam on Azure DevOps?",
    given: { project: "Fabrikam", repository: "web", "pull request": 77 },
    steps: [step("comments on a pull request", ["azure-devops/repo_pull_request_thread"], { repositoryId: "web", pullRequestId: 77 })],
  },
  {
    id: "stripe-money-back",
    prompt: "Give the customer their money back for payment pi_3Nx8 on Stripe.",
    given: { payment: "pi_3Nx8" },
    steps: [step("give a customer their money back for a payment", ["stripe/create_refund"], { payment_intent: "pi_3Nx8" })],
  },
  {
    id: "stripe-stop-plan",
    prompt: "Find the Stripe subscriptions of customer cus_9s2, then stop subscription sub_1Kx.",
    given: { customer: "cus_9s2", subscription: "sub_1Kx" },
    steps: [
      step("subscriptions of a customer", ["stripe/list_subscriptions"], { customer: "cus_9s2" }),
      step("stop a subscription", ["stripe/cancel_subscription"], { subscription: "sub_1Kx" }),
    ],
  },
  {
    id: "sentry-errors",
    prompt: "What errors are being reported for the acme organization in Sentry?",
    given: { organization: "acme" },
    steps: [step("errors reported for an organization", ["sentry/search_issues", "sentry/search_events"], { organizationSlug: "acme" })],
  },
  {
    id: "gh-pr-files",
    prompt: "Which files does pull request 12 change in the octo/site repository on GitHub?",
    given: { owner: "octo", repository: "site", "pull request": 12 },
    steps: [step("files changed by a pull request", ["github/get_pull_request_files"], { owner: "octo", repo: "site", pull_number: 12 })],
  },
  {
    id: "maps-drive",
    prompt: "How do I drive from Berlin to Hamburg?",
    given: { from: "Berlin", to: "Hamburg" },
    steps: [step("driving route between two cities", ["google-maps/maps_directions"], { origin: "Berlin", destination: "Hamburg" })],
  },
  {
    id: "k8s-pod-logs",
    prompt: "Show me what pod web-7f9 in namespace shop has been printing.",
    given: { pod: "web-7f9", namespace: "shop" },
    steps: [step("what a pod has been printing", ["kubernetes/kubectl_logs"], { resourceType: "pod", name: "web-7f9", namespace: "shop" })],
  },
  {
    id: "gh-issue-then-gl",
    prompt: "Read issue 3 of octo/site on GitHub, then open the same issue in acme/web on GitLab.",
    given: { owner: "octo", repository: "site", issue: 3, project: "acme/web", title: "Port of octo/site#3" },
    steps: [
      step("read one GitHub issue with its details", ["github/get_issue"], { owner: "octo", repo: "site", issue_number: 3 }),
      step("open a new GitLab issue in a project", ["gitlab/create_issue"], { project_id: "acme/web", title: "Port of octo/site#3" }),
    ],
  },
];
