import { limiter } from '../../engine/native.js';
import { noteHotEffect } from '../../store/durability.js';
import type { Ctx } from '../context.js';
import type { LimitInput } from './limit.js';
import { namespacesForLimit } from './namespace.js';
import type { NamespaceRecord } from '../../store/records.js';

/** One outcome of the native limiter's JSON (native/src/limit.rs outcomes_json). */
export interface LimitOutcome {
  success: boolean;
  limit: number;
  remaining: number;
  reset: number;
  overrideId?: string;
}

export interface MultiLimitResult {
  passed: boolean;
  limits: { namespace: string; identifier: string; limit: number; remaining: number; reset: number; passed: boolean; overrideId?: string }[];
}

/** Packs the requests as native/src/limit.rs decode_requests reads them. */
export function packLimitRequests(items: { namespaceId: string; identifier: string; limit: number; duration: number; cost: number }[]): Buffer {
  const parts: Buffer[] = [];
  for (const item of items) {
    for (const text of [item.namespaceId, item.identifier]) {
      const bytes = Buffer.from(text, 'utf8');
      const len = Buffer.alloc(2);
      len.writeUInt16LE(bytes.length);
      parts.push(len, bytes);
    }
    const nums = Buffer.alloc(24);
    nums.writeDoubleLE(item.limit, 0);
    nums.writeDoubleLE(item.duration, 8);
    nums.writeDoubleLE(item.cost, 16);
    parts.push(nums);
  }
  return Buffer.concat(parts);
}

/** All or nothing: when any item is refused, no item consumes anything. */
export function multiLimit(input: LimitInput[], ctx: Ctx): MultiLimitResult {
  const namespaces = namespacesForLimit(ctx, input.map((item) => item.namespace));
  const items = input.map((item, i) => ({ ...item, namespaceId: (namespaces[i] as NamespaceRecord).id }));
  const out = limiter.limitMany(packLimitRequests(items), ctx.nowMs);
  noteHotEffect(out.charCodeAt(0));
  const outcomes = JSON.parse(out.slice(1)) as LimitOutcome[];
  const limits = outcomes.map((o, i) => {
    const entry: MultiLimitResult['limits'][number] = { namespace: input[i]?.namespace ?? '', identifier: input[i]?.identifier ?? '', limit: o.limit, remaining: o.remaining, reset: o.reset, passed: o.success };
    if (o.overrideId !== undefined) entry.overrideId = o.overrideId;
    return entry;
  });
  return { passed: limits.every((l) => l.passed), limits };
}
