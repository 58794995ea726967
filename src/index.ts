// Worker entry: the router and the session object class, nothing else.
import { app } from "./http/app.ts";

export { SessionObject } from "./session/object.ts";
export { TeamIndex } from "./session/team-index.ts";
export default app;
