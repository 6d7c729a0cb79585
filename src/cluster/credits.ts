// This node's part of the cluster's credits (docs/cluster.md, "Credits"). The balance of a
// limited key lives in PostgreSQL (kw_credits); a node spends from a lease PostgreSQL granted
// it, inside the same store transaction as a verification on one node (native/src/credits.rs
// Lease), so a verification waits for nothing in the common case. Here:
//  - `obtain`: a verification this node's lease cannot pay for (the engine declined it with a
//    credits need; settle.ts) asks PostgreSQL for the next lease, sized from the key's recent rate and
//    never more than balance / (2 × live nodes); when none can be granted any more (near
//    exhaustion) PostgreSQL decides the spend itself and recalls the other nodes' leases, so
//    that none stay stranded there. With every node up, a key's VALID answers number its
//    credits exactly.
//  - leases that went low are renewed ahead (the engine notes them: native leasesLow);
//    leases nothing was spent from for KEYWARD_CLUSTER_LEASE_QUIET_MS go back (a minute by
//    default: a lease lasts about 30 s of the key's traffic, so a shorter pause keeps it; near
//    exhaustion recalls fetch what quiet nodes hold), in batches, as do recalled ones and all
//    of them when the node stops; a node that starts gives back what a crash left (grants and returns are
//    totals, so a repeated one counts once).
//  - PostgreSQL away: leases held are spent, then KEYWARD_CLUSTER_CREDITS_OFFLINE decides:
//    `refuse` (USAGE_EXCEEDED) or `allow` (up to the allowance per key on this node, charged
//    to the balance once PostgreSQL is back).
import { randomUUID } from 'node:crypto';
import type { ClusterNeed, Payment } from '../engine/hotCalls.js';
import { native } from '../engine/native.js';
import { postgresUnavailable } from '../errors/errors.js';
import type { Logger } from '../log.js';
import { delRecord, getText, putText, scanPrefix, type Writer } from '../store/db.js';
import { PostgresUnavailable, type Postgres } from './postgres.js';
import type { Replica } from './replica.js';

export type OfflineCredits = 'refuse' | 'allow';

export interface CreditsOptions {
  /** KEYWARD_CLUSTER_CREDITS_OFFLINE. */
  readonly offline: OfflineCredits;
  /** KEYWARD_CLUSTER_CREDITS_OFFLINE_ALLOWANCE: credits of a key this node lets through while PostgreSQL is away (`allow`). */
  readonly allowance: number;
  /** KEYWARD_CLUSTER_LEASE_TTL_MS: a lease its node has not renewed for this long counts as spent. */
  readonly leaseTtlMs: number;
  /** KEYWARD_CLUSTER_LEASE_QUIET_MS: a lease nothing was spent from for this long goes back (the key went quiet here). */
  readonly quietMs: number;
}

export type CreditsNeed = NonNullable<ClusterNeed['credits']>;

/** How the cluster settled a call's credits (`obtain`). */
export interface Obtained {
  /** None: this node's lease pays (the call spends from it). */
  readonly payment?: Payment;
  /** The call did not spend what was paid: it goes back. */
  readonly unused?: () => void;
}

/** A lease lasts about this long at the key's recent rate. */
const LEASE_MS = 30_000;
/** The first lease of a key on this node (no rate known yet). */
const FIRST_LEASE = 16;
const MAX_LEASE = 1_000_000;
/** Leases given back in one PostgreSQL statement (and one local transaction) at most. */
const RETURN_BATCH = 500;
/** Waits of a refusal for recalled leases to come back before it is final. */
const RECALLS = 3;
const RECALL_WAIT_MS = 25;
/**
 * How often the engine's low leases are renewed (together), and quiet ones given back. A
 * lease goes low with a quarter of it left, about 7 s of the key's traffic.
 */
const LOW_POLL_MS = 100;
/**
 * A lease a verification waits for, at most: as long as connecting may take. Past it
 * PostgreSQL counts as away (KEYWARD_CLUSTER_CREDITS_OFFLINE decides the call), and for
 * RETRY_AFTER_MS after that the verifications that need a lease do not wait for it again.
 */
const TAKE_TIMEOUT_MS = 2_000;
const RETRY_AFTER_MS = 1_000;
const QUIET_POLL_MS = 500;
/** Meta keys of credits let through offline, not yet charged: + key id → {id, amount}. */
const OFFLINE = 'cluster/credits_offline/';

interface TakeRow {
  outcome: 'lease' | 'paid' | 'refused' | 'none' | 'unlimited';
  epoch: string;
  granted: string;
  balance: string;
  others: string;
  seq: string;
}

interface Take {
  readonly outcome: TakeRow['outcome'];
  readonly epoch: number;
  readonly granted: number;
  readonly balance: number;
  readonly others: number;
  readonly seq: number;
}

/**
 * What this thread knows of a key's leases: when it was last granted one, and of what size;
 * what the lease held when last looked at, and since when it has held that (nothing spent).
 */
interface Recent {
  at: number;
  size: number;
  held?: number;
  since?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class ClusterCredits {
  private readonly recent = new Map<string, Recent>();
  private readonly asking = new Map<string, Promise<void>>();
  /** Leases taken back here whose return PostgreSQL has not confirmed (it was away): told again. */
  private readonly unconfirmed = new Set<string>();
  /** Credits were let through offline since the last charge (they are in meta OFFLINE). */
  private offlinePending = false;
  private timers: NodeJS.Timeout[] = [];
  private unlisten: (() => Promise<void>) | undefined;
  private stopped = false;

  constructor(
    private readonly pg: Postgres,
    /** This thread's local transactions (the serving thread's gated writer). */
    private readonly local: Writer,
    private readonly replica: Replica,
    private readonly node: string,
    private readonly options: CreditsOptions,
    private readonly log: Logger,
  ) {}

  /**
   * What settles a verification the engine declined for credits (settle.ts calls it again
   * with `payment`): a lease for this node (no payment: the call spends from the lease), or
   * PostgreSQL's payment or refusal. `unused`: to call when the call did not spend what was
   * paid. `attempt` > 1: a lease granted for this call was spent by others first, so the
   * spend is decided in PostgreSQL.
   */
  async obtain(need: CreditsNeed, attempt: number): Promise<Obtained> {
    for (let recalls = 0; ; recalls++) {
      let take: Take;
      try {
        take = await this.take(need.keyId, need.cost, attempt === 1 ? this.want(need.keyId, need.cost) : 0, true, need.refillAt);
      } catch (err) {
        if (!(err instanceof PostgresUnavailable)) throw err;
        return this.offline(need);
      }
      if (take.seq > 0) await this.replica.waitApplied(take.seq);
      switch (take.outcome) {
        case 'lease':
          this.granted(need.keyId, take);
          return {};
        case 'paid':
          this.noteBalance(need.keyId, take);
          return { payment: { paid: true, balance: take.balance }, unused: () => void this.refund(need.keyId, take.epoch, need.cost) };
        case 'refused':
          // Other nodes' leases were recalled: what they give back may pay for this call.
          if (take.others > 0 && recalls < RECALLS) {
            await sleep(RECALL_WAIT_MS);
            break;
          }
          this.noteBalance(need.keyId, take);
          return { payment: { paid: false, balance: take.balance } };
        case 'unlimited':
        case 'none':
          // The key lost its credits on the cluster: this node applies that, and verifies again.
          await this.replica.waitHead();
          return {};
      }
    }
  }

  /** PostgreSQL away: what KEYWARD_CLUSTER_CREDITS_OFFLINE says. */
  private offline(need: CreditsNeed): Obtained {
    const known = native.creditsGet(need.keyId, Date.now())?.[0] ?? 0;
    // Shared by this node's threads: the store holds what was let through.
    const spent = parseOffline(getText('meta', OFFLINE + need.keyId))?.amount ?? 0;
    if (this.options.offline !== 'allow' || spent + need.cost > this.options.allowance) return { payment: { paid: false, balance: known } };
    this.noteOffline(need.keyId, need.cost);
    return { payment: { paid: true, balance: known }, unused: () => this.noteOffline(need.keyId, -need.cost) };
  }

  private noteOffline(keyId: string, amount: number): void {
    this.offlinePending = true;
    this.local.transact(() => {
      const held = parseOffline(getText('meta', OFFLINE + keyId));
      const next = { id: held?.id ?? randomUUID(), amount: (held?.amount ?? 0) + amount };
      if (next.amount <= 0) delRecord('meta', OFFLINE + keyId);
      else putText('meta', OFFLINE + keyId, JSON.stringify(next));
    });
  }

  /** Charges what was let through offline (once per record: PostgreSQL keeps the ids). */
  private async chargeOffline(): Promise<void> {
    for (const { key, value } of scanPrefix('meta', OFFLINE, undefined, 1_000)) {
      const held = parseOffline(value.toString('utf8'));
      const keyId = key.slice(OFFLINE.length);
      if (held !== undefined) await this.pg.query('SELECT kw_credits_charge($1, $2, $3)', [held.id, Buffer.from(keyId), held.amount]);
      this.local.transact(() => {
        // Charged as it was when read; what was let through meanwhile stays for next time.
        const now = parseOffline(getText('meta', key));
        if (now === undefined || now.id !== held?.id || now.amount === held.amount) delRecord('meta', key);
        else putText('meta', key, JSON.stringify({ id: randomUUID(), amount: now.amount - held.amount }));
      });
    }
  }

  /**
   * The lease to ask for: enough for LEASE_MS at the rate this thread's last lease went at,
   * and no less than that lease while the key stays busy here (a pause does not shrink it;
   * a quiet key's lease goes back instead).
   */
  private want(keyId: string, cost: number): number {
    const r = this.recent.get(keyId);
    const floor = Math.max(cost, 1);
    if (r === undefined) return Math.max(floor, FIRST_LEASE);
    const rate = r.size / Math.max(Date.now() - r.at, 1);
    return Math.min(MAX_LEASE, Math.max(floor, r.size, Math.ceil(rate * LEASE_MS)));
  }

  private async take(keyId: string, cost: number, want: number, pay: boolean, refillAt: number | null): Promise<Take> {
    // A verification waits on this: PostgreSQL found away a moment ago is not waited for again.
    if (this.pg.failedWithin(RETRY_AFTER_MS)) throw new PostgresUnavailable(`PostgreSQL is unreachable: ${this.pg.lastError}`);
    const [row] = await this.pg.query<TakeRow>('SELECT * FROM kw_credits_take($1, $2, $3, $4, $5, $6, $7, $8)', [
      this.node,
      Buffer.from(keyId),
      cost,
      want,
      pay,
      refillAt,
      Date.now(),
      this.options.leaseTtlMs,
    ], TAKE_TIMEOUT_MS);
    if (row === undefined) throw new Error('kw_credits_take returned no row');
    return takeOf(row);
  }

  /** Records a grant in this node's lease (in a local transaction). */
  private granted(keyId: string, take: Take): void {
    const before = native.leaseGet(keyId);
    const after = this.local.transact(() => native.leaseGrant(keyId, take.epoch, take.granted, take.balance, false));
    const added = after - (before !== undefined && before[3] === take.epoch ? before[0] : 0);
    this.recent.set(keyId, { at: Date.now(), size: Math.max(added, 1) });
  }

  /** What PostgreSQL said of the balance; after a refusal with no lease out, the engine refuses alone until the balance changes. */
  private noteBalance(keyId: string, take: Take): void {
    const exhausted = take.outcome === 'refused' && take.balance === 0 && take.others === 0;
    this.local.transact(() => native.leaseGrant(keyId, take.epoch, 0, take.balance, exhausted));
  }

  private async refund(keyId: string, epoch: number, amount: number): Promise<void> {
    await this.pg.query('SELECT kw_credits_refund($1, $2, $3, $4)', [this.node, Buffer.from(keyId), epoch, amount]).catch((err: unknown) => {
      this.log.warn('credits paid for a verification that did not spend them could not go back', { keyId, amount, error: (err as Error).message });
    });
  }

  /**
   * keys.updateCredits increment (delta > 0) or decrement (delta < 0) on the cluster's
   * balance; resolves once this node has applied it. False: the key has no credits on the
   * cluster.
   */
  async adjust(keyId: string, delta: number): Promise<boolean> {
    let seq: string | null | undefined;
    try {
      [{ seq } = { seq: null }] = await this.pg.query<{ seq: string | null }>('SELECT kw_credits_adjust($1, $2, $3, $4) AS seq', [this.node, Buffer.from(keyId), delta, this.options.leaseTtlMs]);
    } catch (err) {
      if (err instanceof PostgresUnavailable) throw postgresUnavailable(`${err.message}. Nothing was changed; verifications go on from this node's leases`);
      throw err;
    }
    if (seq === null || seq === undefined) return false;
    await this.replica.waitApplied(Number(seq));
    return true;
  }

  /**
   * Asks for the next lease of every key whose lease went low (and is not being asked for
   * already), in one statement: each PostgreSQL round trip costs this node far more CPU than
   * a verification, so the poll gathers what went low in LOW_POLL_MS. Keys in order, so two
   * nodes' statements lock rows in the same order.
   */
  private renew(low: readonly string[]): void {
    if (this.stopped) return;
    const keyIds = [...new Set(low)].filter((k) => !this.asking.has(k)).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    if (keyIds.length === 0) return;
    const asked = this.pg
      .query<TakeRow & { i: string }>(
        'SELECT u.i, t.* FROM unnest($2::bytea[], $3::int8[]) WITH ORDINALITY AS u(k, w, i), LATERAL kw_credits_take($1, u.k, 0, u.w, false, NULL, $4, $5) t ORDER BY u.i',
        [this.node, keyIds.map((k) => Buffer.from(k)), keyIds.map((k) => this.want(k, 1)), Date.now(), this.options.leaseTtlMs],
      )
      .then((rows) => {
        for (const row of rows) {
          const keyId = keyIds[Number(row.i) - 1];
          const take = takeOf(row);
          if (keyId !== undefined && take.outcome === 'lease') this.granted(keyId, take);
        }
      })
      .catch(() => undefined)
      .finally(() => keyIds.forEach((k) => this.asking.delete(k)));
    for (const k of keyIds) this.asking.set(k, asked);
  }

  /**
   * Gives back what this node's leases of `keyIds` hold: taken from the leases in one local
   * transaction, told to PostgreSQL in one statement per RETURN_BATCH keys (in key order, so
   * two nodes' batches lock rows in the same order). A return PostgreSQL does not confirm is
   * told again later (the totals make a repeat count once).
   */
  async giveBack(keyIds: readonly string[]): Promise<void> {
    for (let i = 0; i < keyIds.length; i += RETURN_BATCH) await this.giveBackBatch(keyIds.slice(i, i + RETURN_BATCH));
  }

  private async giveBackBatch(keyIds: readonly string[]): Promise<void> {
    const backs = this.local.transact(() => keyIds.map((keyId) => ({ keyId, back: native.leaseGiveBack(keyId) })));
    const held = backs.flatMap(({ keyId, back }) => {
      this.recent.delete(keyId);
      if (back === undefined) return [];
      this.unconfirmed.add(keyId);
      const [epoch, returned, , granted] = back;
      return [{ keyId, key: Buffer.from(keyId), epoch, returned, granted }];
    });
    if (held.length === 0) return;
    held.sort((a, b) => Buffer.compare(a.key, b.key));
    const rows = await this.pg.query<{ i: string; balance: string | null }>(
      'SELECT u.i, kw_credits_return($1, u.k, u.e, u.r, u.g) AS balance FROM unnest($2::bytea[], $3::int8[], $4::int8[], $5::int8[]) WITH ORDINALITY AS u(k, e, r, g, i) ORDER BY u.i',
      [this.node, held.map((h) => h.key), held.map((h) => h.epoch), held.map((h) => h.returned), held.map((h) => h.granted)],
    );
    this.local.transact(() => {
      for (const row of rows) {
        const h = held[Number(row.i) - 1];
        if (h === undefined) continue;
        this.unconfirmed.delete(h.keyId);
        if (row.balance !== null) native.leaseGrant(h.keyId, h.epoch, 0, Number(row.balance), false);
      }
    });
  }

  /**
   * Every lease PostgreSQL has granted this node goes back: grants a crash kept from being
   * recorded here are recorded first, so what goes back is exact. At start and at stop.
   */
  async giveBackAll(): Promise<number> {
    const rows = await this.pg.query<{ key_id: Buffer; epoch: string; granted: string; balance: string }>(
      'SELECT l.key_id, l.epoch, l.granted, c.balance FROM kw_leases l JOIN kw_credits c USING (key_id) WHERE l.node = $1 AND l.epoch = c.epoch AND l.granted > l.settled',
      [this.node],
    );
    const keyIds = rows.map((r) => r.key_id.toString('utf8'));
    this.local.transact(() => rows.forEach((r, i) => native.leaseGrant(keyIds[i] as string, Number(r.epoch), Number(r.granted), Number(r.balance), false)));
    await this.giveBack(keyIds);
    await this.chargeOffline().catch(() => undefined);
    return rows.length;
  }

  /** Renews low leases, gives back quiet ones and recalled ones, charges offline credits once PostgreSQL is back. */
  async start(): Promise<void> {
    const low = setInterval(() => this.renew(native.leasesLow()), LOW_POLL_MS);
    const quiet = setInterval(() => void this.quiet(), QUIET_POLL_MS);
    this.timers = [low, quiet];
    this.timers.forEach((t) => t.unref());
    await this.listen().catch(() => undefined);
  }

  private async quiet(): Promise<void> {
    // While PostgreSQL is away, leases are spent on: what is given back could not be told.
    if (!this.pg.healthy) return;
    if (this.unlisten === undefined) await this.listen().catch(() => undefined);
    await this.giveBack([...this.unconfirmed]).catch(() => undefined);
    const now = Date.now();
    const quiet: string[] = [];
    for (const [keyId, r] of this.recent) {
      const held = native.leaseGet(keyId)?.[0];
      if (held !== r.held) {
        r.held = held;
        r.since = now;
      } else if (now - (r.since ?? now) >= this.options.quietMs && !this.asking.has(keyId)) {
        quiet.push(keyId);
      }
    }
    await this.giveBack(quiet).catch(() => undefined);
    if (this.offlinePending && this.pg.healthy) {
      this.offlinePending = false;
      await this.chargeOffline().catch(() => (this.offlinePending = true));
    }
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    this.unlisten = await this.pg.listen(
      'kw_credits_recall',
      // Also a lease spent to nothing: giving it back tells PostgreSQL this node holds none.
      (keyId) => {
        if (native.leaseGet(keyId) !== undefined) void this.giveBack([keyId]).catch(() => undefined);
      },
      () => (this.unlisten = undefined),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timers.forEach((t) => clearInterval(t));
    await this.unlisten?.();
    await Promise.all(this.asking.values());
  }
}

function takeOf(row: TakeRow): Take {
  return { outcome: row.outcome, epoch: Number(row.epoch), granted: Number(row.granted), balance: Number(row.balance), others: Number(row.others), seq: Number(row.seq) };
}

function parseOffline(text: string | undefined): { id: string; amount: number } | undefined {
  if (text === undefined) return undefined;
  const v = JSON.parse(text) as { id?: unknown; amount?: unknown };
  return typeof v.id === 'string' && typeof v.amount === 'number' ? { id: v.id, amount: v.amount } : undefined;
}
