// Shared by the durability tests: credit-consuming verification load over keep-alive
// connections, with exact accounting of what the server acknowledged.
import http from 'node:http';
import type { Server } from '../helpers/server.js';
import { postWithAgent } from '../helpers/agent.js';

export interface Tally {
  /** Requests written to a socket. */
  sent: number;
  /** Responses received (any status). */
  answered: number;
  /** VALID responses: credits the server acknowledged spending. */
  acknowledged: number;
  /** Other 200 responses (e.g. USAGE_EXCEEDED) and non-200s. */
  refused: number;
  errors: number;
}

async function verifyOnce(agent: http.Agent, server: Server, key: string): Promise<{ status: number; code?: string }> {
  const { status, text } = await postWithAgent(agent, `${server.url}/v2/keys.verifyKey`, server.rootKey, { key });
  try {
    return { status, code: (JSON.parse(text) as { data?: { code?: string } }).data?.code };
  } catch {
    return { status };
  }
}

/**
 * Runs `loops` concurrent verification loops against `server` until `until(tally)` is true,
 * then calls `kill` (still under load: every loop has a request outstanding or about to)
 * and waits for every loop to finish. Responses that arrive after the kill still count:
 * the server sent them before it died.
 */
export async function loadThenKill(server: Server, key: string, loops: number, until: (t: Tally) => boolean, kill: () => void): Promise<Tally> {
  const t: Tally = { sent: 0, answered: 0, acknowledged: 0, refused: 0, errors: 0 };
  const agent = new http.Agent({ keepAlive: true, maxSockets: loops });
  let stop = false;
  let killed!: () => void;
  const killedP = new Promise<void>((resolve) => (killed = resolve));
  const loop = async (): Promise<void> => {
    while (!stop) {
      t.sent++;
      try {
        const r = await verifyOnce(agent, server, key);
        t.answered++;
        if (r.status === 200 && r.code === 'VALID') t.acknowledged++;
        else t.refused++;
      } catch {
        t.errors++;
        return;
      }
      if (!stop && until(t)) {
        stop = true;
        kill();
        killed();
      }
    }
  };
  await Promise.all(Array.from({ length: loops }, loop));
  await killedP;
  agent.destroy();
  return t;
}

export interface Ledger {
  initial: number;
  acknowledged: number;
  inflight: number;
}

/** Violations of initial − acknowledged − inflight ≤ balance ≤ initial − acknowledged. */
export function ledgerViolations(l: Ledger, balance: number): string[] {
  const out: string[] = [];
  const upper = l.initial - l.acknowledged;
  const lower = upper - l.inflight;
  if (balance > upper) out.push(`balance ${balance} > initial ${l.initial} − acknowledged ${l.acknowledged} = ${upper}: acknowledged spends were lost`);
  if (balance < lower) out.push(`balance ${balance} < ${lower} (= initial − acknowledged − inflight ${l.inflight}): credits spent without a request`);
  return out;
}
