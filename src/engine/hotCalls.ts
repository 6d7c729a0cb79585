// The hot procedures' calls into the engine (native.ts HotEntry): request bytes and a context
// in a fixed layout in, the reply envelope and an effect code out.
//
// Context layout (native/src/context.rs reads it; all numbers little-endian):
//   0  f64  nowMs, the time the call decides at (ms since the epoch, an integer)
//   8  u32  flags: bit 0 VALIDATED — the bytes are the full way's (validated by the schema,
//           re-serialised): the call answers or throws, never declines
//  12  u32  effect, written by the call (Effect)
//  16  u32  workspace id length   20 u32 request id length (0: the engine draws the next id
//  24  u32  scope length                  of this thread's sequence)    28 u32 zero
//  32  …    workspace id, request id, scope (UTF-8), back to back
// The scope is what the root key may act on: "*" for every API (verifyKey) or namespace
// (limit, multiLimit) of the workspace, else their ids joined by "\n" (Principal.scopeOf).
//
// A call declines (undefined, having read nothing, changed nothing and drawn no id) a body its
// reader does not accept — the full way then validates it and answers the 400, or calls again
// with the validated bytes — and, for limit and multiLimit, a namespace the workspace lacks or
// the scope excludes (the full way creates it, or answers the 403).
import { endianness } from 'node:os';
import { native, type HotEntry } from './native.js';

/**
 * What a hot call did to the store: None (0) nothing changed; Wrote (1) changes committed, or
 * written into this thread's open batch; OpenedBatch (2) changes written into a batch the
 * call opened, which the durability gate must commit.
 */
export const Effect = { None: 0, Wrote: 1, OpenedBatch: 2 } as const;
export type Effect = (typeof Effect)[keyof typeof Effect];

function effectOf(code: number): Effect {
  if (code === Effect.None || code === Effect.Wrote || code === Effect.OpenedBatch) return code;
  throw new Error(`the engine reported an unknown effect ${code}`);
}

/** A hot call's answer: the whole success envelope, and what the call changed. */
export interface Served {
  readonly body: string;
  readonly effect: Effect;
}

const HEADER_BYTES = 32;
const VALIDATED = 1;
// The header is written through typed-array views, which use the machine's byte order.
if (endianness() !== 'LE') throw new Error('keyward runs on little-endian machines only (the engine context is little-endian)');

/** One per thread: the context buffer, rewritten only where a call's context differs. */
export class HotCalls {
  private context = Buffer.alloc(1024);
  /** Views of the context's header: nowMs at [0] of the f64 view, flags and effect at [2] and [3] of the u32 one. */
  private f64 = new Float64Array(this.context.buffer, this.context.byteOffset, 1);
  private u32 = new Uint32Array(this.context.buffer, this.context.byteOffset, HEADER_BYTES / 4);
  private workspaceId = '';
  private scope = '';
  private requestId = '';

  /**
   * keys.verifyKey; `scope`: the APIs the root key may verify. `validated`: the bytes are the
   * full way's, answered or thrown for, never declined.
   */
  verifyKey(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: true): Served;
  verifyKey(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: false): Served | undefined;
  verifyKey(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: boolean): Served | undefined {
    return this.call(native.verifyKey, request, workspaceId, scope, nowMs, validated, '');
  }

  /** ratelimits.limit; `scope`: the namespaces the root key may limit in. */
  limit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: true): Served;
  limit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: false): Served | undefined;
  limit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: boolean): Served | undefined {
    return this.call(native.limit, request, workspaceId, scope, nowMs, validated, '');
  }

  /** ratelimits.multiLimit, all or nothing; `scope` as for limit. */
  multiLimit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: true): Served;
  multiLimit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: false): Served | undefined;
  multiLimit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: boolean): Served | undefined {
    return this.call(native.multiLimit, request, workspaceId, scope, nowMs, validated, '');
  }

  /** Any entry, with a request id of the caller's ('' : the engine draws one; tests compare envelopes byte for byte). */
  call(entry: HotEntry, request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: boolean, requestId: string): Served | undefined {
    const context = this.prepare(workspaceId, scope, requestId);
    this.f64[0] = nowMs;
    this.u32[2] = validated ? VALIDATED : 0;
    const body = entry(request, context);
    return body === undefined ? undefined : { body, effect: effectOf(this.u32[3] ?? -1) };
  }

  /** The context buffer with these strings in place (written again only when one changed). */
  private prepare(workspaceId: string, scope: string, requestId: string): Buffer {
    if (workspaceId === this.workspaceId && scope === this.scope && requestId === this.requestId) return this.context;
    const lengths = [Buffer.byteLength(workspaceId), Buffer.byteLength(requestId), Buffer.byteLength(scope)] as const;
    const size = HEADER_BYTES + lengths[0] + lengths[1] + lengths[2];
    if (size > this.context.length) {
      this.context = Buffer.alloc(Math.max(size, this.context.length * 2));
      this.f64 = new Float64Array(this.context.buffer, this.context.byteOffset, 1);
      this.u32 = new Uint32Array(this.context.buffer, this.context.byteOffset, HEADER_BYTES / 4);
    }
    const c = this.context;
    c.writeUInt32LE(lengths[0], 16);
    c.writeUInt32LE(lengths[1], 20);
    c.writeUInt32LE(lengths[2], 24);
    c.writeUInt32LE(0, 28);
    let at = HEADER_BYTES;
    at += c.write(workspaceId, at, 'utf8');
    at += c.write(requestId, at, 'utf8');
    c.write(scope, at, 'utf8');
    this.workspaceId = workspaceId;
    this.scope = scope;
    this.requestId = requestId;
    return c;
  }
}
