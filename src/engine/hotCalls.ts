// The hot procedures' calls into the engine (native.ts HotEntry): request bytes and a context
// in a fixed layout in, the reply envelope and an effect code out.
//
// Context layout (native/src/context.rs reads it; all numbers little-endian):
//   0  f64  nowMs, the time the call decides at (ms since the epoch, an integer)
//   8  u32  flags: bit 0 VALIDATED — the bytes are the full way's (validated by the schema,
//           re-serialised): the call answers or throws, never declines them; bit 1 LEASED —
//           cluster mode: credits are spent from this node's lease, and a call the lease
//           cannot pay for declines with a need; bit 2 PAID — the cluster paid this call's
//           credits already; bit 3 REFUSED — the cluster had not enough for them; bit 4
//           SHARED — rate-limit windows are counted with the other nodes' (Redis), a call
//           only Redis can decide declines with a need; bit 5 SPLIT — Redis is away, each node
//           keeps within its share; bit 6 GRANTED (with SHARED) — the call is made again after
//           Redis granted its windows: it may take from grants other calls wait for; bit 7
//           NO_EVENTS — the call leaves no analytics event (native/src/events.rs)
//  12  u32  effect, written by the call (Effect)
//  16  u32  workspace id length   20 u32 request id length (0: the engine draws the next id
//  24  u32  scope length                  of this thread's sequence)
//  28  u32  needs, written by the call: bit 0 the call needs the cluster (its reply is the
//           JSON of a ClusterNeed); bit 1 it spent the credits PAID paid for
//  32  f64  the cluster's credits balance (with PAID or REFUSED)
//  40  u32  live nodes (with SHARED or SPLIT)
//  44  u32  key hash length: 0, or 32 — verifyKey looks the key up under the 32 bytes after
//           the scope instead of its SHA-256 (a migrated key's placeholder)   48 … 63 zero
//  64  …    workspace id, request id, scope (UTF-8), back to back; then the key hash, if any
// The scope is what the root key may act on: "*" for every API (verifyKey) or namespace
// (limit, multiLimit) of the workspace, else their ids joined by "\n" (Principal.scopeOf).
//
// A call declines (undefined, having read nothing, changed nothing and drawn no id) a body its
// reader does not accept — the full way then validates it and answers the 400, or calls again
// with the validated bytes — and, for limit and multiLimit, a namespace the workspace lacks or
// the scope excludes (the full way creates it, or answers the 403). In cluster mode a call
// may also need the cluster (a Need, having changed nothing): src/cluster/ settles it and
// calls again.
import { endianness } from 'node:os';
import { native, type HotEntry } from './native.js';

/**
 * What a request (a hot call, or a whole request) did to the store: None (0) nothing
 * changed, and nothing was read of this thread's open batch's changes; ReadUncommitted (1)
 * nothing changed, but the answer read what the open batch changed (it stands only if that
 * batch commits); Wrote (2) changes committed, or written into this thread's open batch;
 * OpenedBatch (3) changes written into a batch the call opened, which the durability gate
 * must commit. Ordered: each asks of the gate all that the ones below it ask, so a request
 * of several parts has the highest of their effects.
 */
export const Effect = { None: 0, ReadUncommitted: 1, Wrote: 2, OpenedBatch: 3 } as const;
export type Effect = (typeof Effect)[keyof typeof Effect];

function effectOf(code: number): Effect {
  if (code === Effect.None || code === Effect.ReadUncommitted || code === Effect.Wrote || code === Effect.OpenedBatch) return code;
  throw new Error(`the engine reported an unknown effect ${code}`);
}

/** A hot call's answer: the whole success envelope, and what the call changed. */
export interface Served {
  readonly body: string;
  readonly effect: Effect;
  /** The call spent credits a Payment paid for (false without one). */
  readonly paidUsed: boolean;
}

/** What only the cluster can decide for a call (native/src/hot.rs Scratch::need_credits, api/hot.rs need_windows). */
export interface ClusterNeed {
  /** This node's lease cannot pay `cost` credits of the key (or its refill at `refillAt` is due). */
  readonly credits?: { readonly keyId: string; readonly cost: number; readonly refillAt: number | null };
  /** Windows only Redis can decide (src/cluster/windows.ts SyncWindow). */
  readonly windows?: readonly { readonly key: string; readonly seq: number; readonly duration: number; readonly limit: number; readonly cost: number; readonly weight: number }[];
}

/** A call that declined because it needs the cluster; it changed nothing. */
export interface Need {
  readonly need: ClusterNeed;
}

export type Outcome = Served | Need;

export function isNeed(outcome: Outcome | undefined): outcome is Need {
  return outcome !== undefined && 'need' in outcome;
}

/** How the cluster settled a call's credits: it paid them, or it had not enough; `balance` is what it has. */
export type Payment = { readonly paid: true; readonly balance: number } | { readonly paid: false; readonly balance: number };

const HEADER_BYTES = 64;
const VALIDATED = 1;
const LEASED = 2;
const PAID = 4;
const REFUSED = 8;
const SHARED = 16;
const SPLIT = 32;
const GRANTED = 64;
const NO_EVENTS = 128;
const NEEDS_CLUSTER = 1;
const PAID_USED = 2;
// The header is written through typed-array views, which use the machine's byte order.
if (endianness() !== 'LE') throw new Error('keyward runs on little-endian machines only (the engine context is little-endian)');

/** One per thread: the context buffer, rewritten only where a call's context differs. */
export class HotCalls {
  private context = Buffer.alloc(1024);
  /** Views of the context's header: nowMs at [0] and the balance at [4] of the f64 view; flags, effect and needs at [2], [3] and [7] of the u32 one. */
  private f64 = new Float64Array(this.context.buffer, this.context.byteOffset, HEADER_BYTES / 8);
  private u32 = new Uint32Array(this.context.buffer, this.context.byteOffset, HEADER_BYTES / 4);
  private workspaceId = '';
  private scope = '';
  private requestId = '';
  private keyHash: Buffer | undefined = undefined;

  /** Cluster mode with Redis: SHARED or SPLIT, and the live nodes (0: windows are this node's own). */
  private windowFlags = 0;
  private nodes = 0;
  /** Inside `afterGrant` (GRANTED) or `alone` (SPLIT): how the call made again counts its windows. */
  private windowsRetry = 0;
  /** The calls that follow leave no analytics event (the request said `X-Unkey-Metrics: disabled`). */
  noEvents = false;

  /** `leased`: cluster mode, where credits are spent from this node's leases. */
  constructor(private readonly leased = false) {}

  /** Cluster mode with Redis (src/cluster/windows.ts): windows shared, or each node within its share of `nodes`. */
  countWindows(mode: 'shared' | 'split', nodes: number): void {
    this.windowFlags = mode === 'shared' ? SHARED : SPLIT;
    this.nodes = Math.max(1, nodes);
  }

  /** Runs `call` (a hot call made again after Redis granted its windows) with GRANTED. */
  afterGrant<T>(call: () => T): T {
    return this.retry(GRANTED, call);
  }

  /** Runs `call` with its windows decided by this node alone, within its share (SPLIT). */
  alone<T>(call: () => T): T {
    return this.retry(SPLIT, call);
  }

  private retry<T>(flag: number, call: () => T): T {
    this.windowsRetry = flag;
    try {
      return call();
    } finally {
      this.windowsRetry = 0;
    }
  }

  /**
   * keys.verifyKey; `scope`: the APIs the root key may verify. `validated`: the bytes are the
   * full way's, answered or thrown for, never declined. `payment`: how the cluster settled the
   * call's credits, after a Need. `keyHash`: the 32 bytes to look the key up under instead
   * of its SHA-256 (a migrated key's placeholder, edits/migrated.ts).
   */
  verifyKey(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: true, payment?: Payment, keyHash?: Buffer): Outcome;
  verifyKey(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: false): Outcome | undefined;
  verifyKey(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: boolean, payment?: Payment, keyHash?: Buffer): Outcome | undefined {
    return this.call(native.verifyKey, request, workspaceId, scope, nowMs, validated, '', payment, keyHash);
  }

  /** ratelimits.limit; `scope`: the namespaces the root key may limit in. */
  limit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: true): Outcome;
  limit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: false): Outcome | undefined;
  limit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: boolean): Outcome | undefined {
    return this.call(native.limit, request, workspaceId, scope, nowMs, validated, '');
  }

  /** ratelimits.multiLimit, all or nothing; `scope` as for limit. */
  multiLimit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: true): Outcome;
  multiLimit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: false): Outcome | undefined;
  multiLimit(request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: boolean): Outcome | undefined {
    return this.call(native.multiLimit, request, workspaceId, scope, nowMs, validated, '');
  }

  /** Any entry, with a request id of the caller's ('' : the engine draws one; tests compare envelopes byte for byte). */
  call(entry: HotEntry, request: Uint8Array, workspaceId: string, scope: string, nowMs: number, validated: boolean, requestId: string, payment?: Payment, keyHash?: Buffer): Outcome | undefined {
    const context = this.prepare(workspaceId, scope, requestId, keyHash);
    this.f64[0] = nowMs;
    let flags = validated ? VALIDATED : 0;
    if (payment !== undefined) {
      flags |= payment.paid ? PAID : REFUSED;
      this.f64[4] = payment.balance;
    } else if (this.leased) {
      flags |= LEASED;
    }
    if (this.windowFlags !== 0) {
      if (this.windowsRetry === SPLIT) flags |= SPLIT;
      else flags |= this.windowFlags | (this.windowsRetry === GRANTED && this.windowFlags === SHARED ? GRANTED : 0);
      this.u32[10] = this.nodes;
    }
    if (this.noEvents) flags |= NO_EVENTS;
    this.u32[2] = flags;
    const body = entry(request, context);
    if (body === undefined) return undefined;
    const needs = this.u32[7] ?? 0;
    if ((needs & NEEDS_CLUSTER) !== 0) return { need: JSON.parse(body) as ClusterNeed };
    return { body, effect: effectOf(this.u32[3] ?? -1), paidUsed: (needs & PAID_USED) !== 0 };
  }

  /** The context buffer with these strings and key hash in place (written again only when one changed). */
  private prepare(workspaceId: string, scope: string, requestId: string, keyHash: Buffer | undefined): Buffer {
    if (workspaceId === this.workspaceId && scope === this.scope && requestId === this.requestId && keyHash === this.keyHash) return this.context;
    const lengths = [Buffer.byteLength(workspaceId), Buffer.byteLength(requestId), Buffer.byteLength(scope)] as const;
    const size = HEADER_BYTES + lengths[0] + lengths[1] + lengths[2] + (keyHash?.length ?? 0);
    if (size > this.context.length) {
      this.context = Buffer.alloc(Math.max(size, this.context.length * 2));
      this.f64 = new Float64Array(this.context.buffer, this.context.byteOffset, HEADER_BYTES / 8);
      this.u32 = new Uint32Array(this.context.buffer, this.context.byteOffset, HEADER_BYTES / 4);
    }
    const c = this.context;
    c.writeUInt32LE(lengths[0], 16);
    c.writeUInt32LE(lengths[1], 20);
    c.writeUInt32LE(lengths[2], 24);
    let at = HEADER_BYTES;
    at += c.write(workspaceId, at, 'utf8');
    at += c.write(requestId, at, 'utf8');
    at += c.write(scope, at, 'utf8');
    c.writeUInt32LE(keyHash?.length ?? 0, 44);
    keyHash?.copy(c, at);
    this.workspaceId = workspaceId;
    this.scope = scope;
    this.requestId = requestId;
    this.keyHash = keyHash;
    return c;
  }
}
