// One per team: the ids of the team's live sessions, since Durable Objects cannot be listed. Admin reloads and
// reconnects find the sessions here; a session adds itself at initialize and removes itself when it ends.
import { DurableObject } from "cloudflare:workers";
import type { Env, TeamIndexRpc } from "../env.ts";

const PREFIX = "session:";

export class TeamIndex extends DurableObject<Env> implements TeamIndexRpc {
  async add(sessionId: string): Promise<void> {
    await this.ctx.storage.put(PREFIX + sessionId, Date.now());
  }

  async remove(sessionId: string): Promise<void> {
    await this.ctx.storage.delete(PREFIX + sessionId);
  }

  async list(): Promise<string[]> {
    return [...(await this.ctx.storage.list({ prefix: PREFIX })).keys()].map((key) => key.slice(PREFIX.length));
  }
}
