import type { Ctx } from '../context.js';
import { analyticsNotKept } from './notKept.js';

export function getRatelimits(_input: { query: string }, ctx: Ctx): never {
  analyticsNotKept(ctx, 'ratelimits', 'rate-limit');
}
