import type { Ctx } from '../context.js';
import { analyticsNotKept } from './notKept.js';

export function getVerifications(_input: { query: string }, ctx: Ctx): never {
  analyticsNotKept(ctx, 'apis', 'key verification');
}
