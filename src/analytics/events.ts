// The event records the engine buffers for analytics (native/src/events.rs lays them out),
// read into the rows of the stored tables (schema.ts). Runs on the analytics worker, off the
// serving threads: the engine copies the request body and the reply as they were, and the
// columns are taken from them here.

export const EVENT_VERIFY = 1;
export const EVENT_LIMIT = 2;
export const EVENT_MULTI_LIMIT = 3;

/** A row of `verifications` (Unkey's key_verifications_v1). */
export interface VerificationRow {
  requestId: string;
  time: number;
  workspaceId: string;
  keySpaceId: string;
  externalId: string;
  keyId: string;
  outcome: string;
  tags: string[];
  spentCredits: number;
}

/** A row of `ratelimits` (Unkey's ratelimits_v1). */
export interface RatelimitRow {
  requestId: string;
  time: number;
  workspaceId: string;
  namespaceId: string;
  namespaceName: string;
  identifier: string;
  passed: boolean;
  latencyMs: number;
  overrideId: string;
  limit: number;
  remaining: number;
  resetAt: number;
  tokens: number;
}

export interface Rows {
  verifications: VerificationRow[];
  ratelimits: RatelimitRow[];
  /** Records that could not be read (a bug between the engine and this reader): counted, skipped. */
  unreadable: number;
}

const HEAD = 20;

type Json = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const int = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/** The rows of every record in `buf` (what native eventsDrain returned). */
export function readEvents(buf: Buffer): Rows {
  const rows: Rows = { verifications: [], ratelimits: [], unreadable: 0 };
  for (let at = 0; at + HEAD <= buf.length; ) {
    const len = buf.readUInt32LE(at);
    if (len < HEAD || at + len > buf.length) {
      rows.unreadable++;
      break;
    }
    const kind = buf[at + 4] as number;
    const time = Number(buf.readBigInt64LE(at + 8));
    const latencyMs = buf.readUInt32LE(at + 16) / 1000;
    const parts: string[] = [];
    for (let p = at + HEAD; parts.length < 5 && p + 4 <= at + len; ) {
      const n = buf.readUInt32LE(p);
      parts.push(buf.toString('utf8', p + 4, p + 4 + n));
      p += 4 + n;
    }
    at += len;
    const [workspaceId, requestId, subject, body, reply] = parts as [string, string, string, string, string];
    try {
      const data = (JSON.parse(reply) as { data: unknown }).data;
      if (kind === EVENT_VERIFY) rows.verifications.push(verification(time, workspaceId, requestId, subject, JSON.parse(body) as Json, data as Json));
      else if (kind === EVENT_LIMIT) rows.ratelimits.push(ratelimit(time, latencyMs, workspaceId, requestId, subject, JSON.parse(body) as Json, data as Json));
      else if (kind === EVENT_MULTI_LIMIT) {
        const items = JSON.parse(body) as Json[];
        const ids = subject.split('\n');
        const limits = ((data as Json).limits ?? []) as Json[];
        items.forEach((item, i) => rows.ratelimits.push(ratelimit(time, latencyMs, workspaceId, requestId, ids[i] ?? '', item, { ...limits[i], success: limits[i]?.passed })));
      } else rows.unreadable++;
    } catch {
      rows.unreadable++;
    }
  }
  return rows;
}

function verification(time: number, workspaceId: string, requestId: string, keySpaceId: string, body: Json, data: Json): VerificationRow {
  const outcome = str(data.code);
  // A key with credits reports what is left; a VALID answer spent its cost (1 unless the request said).
  const cost = int((body.credits as Json | undefined)?.cost, 1);
  const spentCredits = outcome === 'VALID' && typeof data.credits === 'number' ? cost : 0;
  const tags = Array.isArray(body.tags) ? body.tags.filter((t): t is string => typeof t === 'string') : [];
  return { requestId, time, workspaceId, keySpaceId, externalId: str((data.identity as Json | undefined)?.externalId), keyId: str(data.keyId), outcome, tags, spentCredits };
}

function ratelimit(time: number, latencyMs: number, workspaceId: string, requestId: string, namespaceId: string, body: Json, data: Json): RatelimitRow {
  return {
    requestId,
    time,
    workspaceId,
    namespaceId,
    namespaceName: str(body.namespace),
    identifier: str(body.identifier),
    passed: data.success === true,
    latencyMs,
    overrideId: str(data.overrideId),
    limit: int(data.limit),
    remaining: int(data.remaining),
    resetAt: int(data.reset),
    tokens: int(body.cost, 1),
  };
}
