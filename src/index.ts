// Worker entry: the router and the two Durable Object classes (sessions and the per-team session index), nothing else.
import { app } from "./edge/app.ts";

export { SessionObject } from "./session/object.ts";
export { TeamIndex } from "./team/team-index.ts";
export default app;
