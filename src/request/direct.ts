// A request context for handlers called outside a serving thread — seeding a store through
// the real management code (bench/lib/seed.ts), tests that call handlers in-process: writes
// commit as they come (no batch of hot calls can be open: no durability gate runs here), hot
// calls go through a context buffer of their own, background jobs and work meant for a pool
// thread run on this thread.
import type { Principal } from '../auth/permissions.js';
import { HotCalls } from '../engine/hotCalls.js';
import { settleOutcome } from './settle.js';
import { createLogger } from '../log.js';
import { direct, settled } from '../store/db.js';
import { BackgroundJobs } from '../workers/jobs.js';
import type { Ctx } from './context.js';

export function directCtx(principal: Principal, nowMs: number, opts: { vaultKey?: string; requestId?: string } = {}): Ctx {
  return {
    principal,
    nowMs,
    requestId: opts.requestId ?? 'req_direct',
    vaultKey: opts.vaultKey,
    hot: new HotCalls(),
    credits: undefined,
    settle: (outcome, again) => settleOutcome(undefined, outcome, again),
    jobs: new BackgroundJobs(settled(direct), createLogger('warn')),
    analytics: undefined,
    transact: settled(direct).transact,
    transactElsewhere: () => undefined,
  };
}
