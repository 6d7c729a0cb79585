// Shared by the durability tests: state-changing load (credit-spending verifications, limit
// calls) over keep-alive connections, with exact accounting of what the server acknowledged.
import http from 'node:http';
import type { Server } from '../helpers/server.js';
import { postWithAgent } from '../helpers/agent.js';

export interface Tally {
  /** Requests written to a socket. */
  sent: number;
  /** Responses received (any status). */
  answered: number;
  /** Acknowledged state changes (VALID verifications, admitted limit calls). */
  acknowledged: number;
  /** Other 200 responses (e.g. USAGE_EXCEEDED) and non-200s. */
  refused: number;
  errors: number;
}

/** One request of the load: resolves to true when the server acknowledged a state change. */
export type Attempt = (agent: http.Agent) => Promise<boolean>;

/** A credit-spending verification of `key`: acknowledged when VALID. */
export function verification(server: Server, key: string): Attempt {
  return async (agent) => {
    const { status, text } = await postWithAgent(agent, `${server.url}/v2/keys.verifyKey`, server.rootKey, { key });
    return status === 200 && dataOf(text)?.code === 'VALID';
  };
}

/** A `ratelimits.limit` call with cost 1: acknowledged when admitted (success: true). */
export function limitCall(server: Server, body: { namespace: string; identifier: string; limit: number; duration: number }): Attempt {
  return async (agent) => {
    const { status, text } = await postWithAgent(agent, `${server.url}/v2/ratelimits.limit`, server.rootKey, body);
    return status === 200 && dataOf(text)?.success === true;
  };
}

function dataOf(text: string): { code?: string; success?: boolean } | undefined {
  try {
    return (JSON.parse(text) as { data?: { code?: string; success?: boolean } }).data;
  } catch {
    return undefined;
  }
}

/**
 * Runs `loops` concurrent loops of `attempt` until `until(tally)` is true, then calls
 * `kill` (still under load: every loop has a request outstanding or about to) and waits for
 * every loop to finish. Responses that arrive after the kill still count: the server sent
 * them before it died.
 */
export async function loadThenKill(attempt: Attempt, loops: number, until: (t: Tally) => boolean, kill: () => void): Promise<Tally> {
  const t: Tally = { sent: 0, answered: 0, acknowledged: 0, refused: 0, errors: 0 };
  const agent = new http.Agent({ keepAlive: true, maxSockets: loops });
  let stop = false;
  let killed!: () => void;
  const killedP = new Promise<void>((resolve) => (killed = resolve));
  const loop = async (): Promise<void> => {
    while (!stop) {
      t.sent++;
      try {
        const acknowledged = await attempt(agent);
        t.answered++;
        if (acknowledged) t.acknowledged++;
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
