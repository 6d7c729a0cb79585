// A hot call's outcome as a handler answers it: the reply, or — cluster mode, a call only the
// cluster could decide — the reply once src/cluster/settle.ts settled it.
import type { ClusterCalls } from '../cluster/settle.js';
import { isNeed, type Outcome, type Payment, type Served } from '../engine/hotCalls.js';

export function settleOutcome(cluster: ClusterCalls | undefined, outcome: Outcome, again: (payment?: Payment) => Outcome): Served | Promise<Served> {
  if (!isNeed(outcome)) return outcome;
  if (cluster === undefined) throw new Error(`the engine needed the cluster outside cluster mode: ${JSON.stringify(outcome.need)}`);
  return cluster.settle(outcome.need, again);
}

/** Straight from the body bytes (Route.fromBody): a call that needs the cluster goes the full way. */
export function servedOrFullWay(outcome: Outcome | undefined): Served | undefined {
  return isNeed(outcome) ? undefined : outcome;
}
