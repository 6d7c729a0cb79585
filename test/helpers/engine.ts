// The engine's hot entries called in-process as the server calls them (request JSON bytes and
// a context, src/engine/hotCalls.ts), for tests of the engine itself: the answer's `data`, the
// effect, the whole envelope.
import { Effect, HotCalls, isNeed } from '../../src/engine/hotCalls.js';
import { native, type HotEntry } from '../../src/engine/native.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Data = Record<string, any>;

export interface HotAnswer {
  /** The answer's `data`. */
  data: Data;
  effect: Effect;
  /** The call changed state (effect Wrote or OpenedBatch). */
  wrote: boolean;
  /** The whole success envelope. */
  envelope: string;
}

export interface CallOptions {
  /** What the root key may act on: '*' (default) or ids joined by '\n'. */
  scope?: string;
  /** The request id the envelope carries; default: the engine draws one. */
  requestId?: string;
  /** The bytes are the full way's (the call must answer, never decline). */
  validated?: boolean;
}

const hot = new HotCalls();

/** One hot call with `request` as its JSON body (an object is serialised; a string is sent as it is); undefined when the engine declined it. */
export function hotCall(entry: HotEntry, workspaceId: string, request: unknown, nowMs: number, o: CallOptions = {}): HotAnswer | undefined {
  const bytes = Buffer.from(typeof request === 'string' ? request : JSON.stringify(request));
  const served = hot.call(entry, bytes, workspaceId, o.scope ?? '*', nowMs, o.validated ?? false, o.requestId ?? '');
  if (served === undefined) return undefined;
  if (isNeed(served)) throw new Error(`the engine needed the cluster: ${JSON.stringify(served.need)}`);
  return { data: (JSON.parse(served.body) as { data: Data }).data, effect: served.effect, wrote: served.effect >= Effect.Wrote, envelope: served.body };
}

function answered(answer: HotAnswer | undefined, what: string): HotAnswer {
  if (answer === undefined) throw new Error(`the engine declined the ${what} request`);
  return answer;
}

/** keys.verifyKey with this body (`{key, credits?, ratelimits?, permissions?}`). */
export function verifyCall(workspaceId: string, body: Data, nowMs: number, o: CallOptions = {}): HotAnswer {
  return answered(hotCall(native.verifyKey, workspaceId, body, nowMs, o), 'verifyKey');
}

/** ratelimits.limit with this body (`namespace` by name or id, in the workspace). */
export function limitCall(workspaceId: string, body: Data, nowMs: number, o: CallOptions = {}): HotAnswer {
  return answered(hotCall(native.limit, workspaceId, body, nowMs, o), 'limit');
}

/** ratelimits.multiLimit with these items. */
export function multiLimitCall(workspaceId: string, items: Data[], nowMs: number, o: CallOptions = {}): HotAnswer {
  return answered(hotCall(native.multiLimit, workspaceId, items, nowMs, o), 'multiLimit');
}

/**
 * A context buffer in native/src/context.rs's layout, for code that loads the addon without
 * src/ (a child process): `Buffer.from(<base64>, 'base64')` there.
 */
export function contextBytes(workspaceId: string, nowMs: number, scope = '*'): Buffer {
  const strings = Buffer.from(workspaceId + scope);
  const header = Buffer.alloc(64);
  header.writeDoubleLE(nowMs, 0);
  header.writeUInt32LE(Buffer.byteLength(workspaceId), 16);
  header.writeUInt32LE(Buffer.byteLength(scope), 24);
  return Buffer.concat([header, strings]);
}
