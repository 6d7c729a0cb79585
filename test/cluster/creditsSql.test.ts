// The leases' protocol in PostgreSQL (src/cluster/schema.ts kw_credits_*), called as nodes
// call it: grants within the balance, the synchronous tail, returns and refunds counted once,
// refills, increments and decrements with leases out, offline charges counted once.
import { beforeEach, describe, expect, it } from 'vitest';
import { migratedPostgres } from '../helpers/cluster.js';

const postgres = migratedPostgres();
const TTL = 60_000;


let key: Buffer;
let n = 0;

beforeEach(async () => {
  key = Buffer.from(`key_sql_${++n}`);
  // Two live nodes.
  await postgres().query(`INSERT INTO kw_nodes (node) VALUES ('a'), ('b') ON CONFLICT (node) DO UPDATE SET seen_at = now()`);
});

async function setBalance(balance: number, refill: [amount: number, day: number, lastMs: number] = [-1, 0, 0]): Promise<void> {
  const after = Buffer.alloc(32);
  [balance, ...refill].forEach((v, i) => after.writeBigInt64BE(BigInt(v), i * 8));
  await postgres().query('SELECT kw_commit($1, ARRAY[100]::smallint[], ARRAY[$2]::bytea[], ARRAY[NULL]::bytea[], ARRAY[$3]::bytea[])', ['a', key, after]);
}

interface Take {
  outcome: string;
  epoch: number;
  granted: number;
  balance: number;
  others: number;
  seq: number;
}

async function take(node: string, cost: number, want: number, pay = true, refillAt: number | null = null): Promise<Take> {
  const [r] = await postgres().query<Record<string, string>>('SELECT * FROM kw_credits_take($1, $2, $3, $4, $5, $6, $7, $8)', [node, key, cost, want, pay, refillAt, Date.now(), TTL]);
  return { outcome: r?.outcome ?? '', epoch: Number(r?.epoch), granted: Number(r?.granted), balance: Number(r?.balance), others: Number(r?.others), seq: Number(r?.seq) };
}

const giveBack = async (node: string, epoch: number, returned: number, granted: number): Promise<number | null> => {
  const [r] = await postgres().query<{ b: string | null }>('SELECT kw_credits_return($1, $2, $3, $4, $5) AS b', [node, key, epoch, returned, granted]);
  return r?.b === null || r?.b === undefined ? null : Number(r.b);
};

const row = async (): Promise<{ balance: number; debt: number; epoch: number }> => {
  const [r] = await postgres().query<Record<string, string>>('SELECT balance, debt, epoch FROM kw_credits WHERE key_id = $1', [key]);
  return { balance: Number(r?.balance), debt: Number(r?.debt), epoch: Number(r?.epoch) };
};

describe('kw_credits_take', () => {
  it('grants what is asked for within balance ÷ (2 × live nodes), as a total per node', async () => {
    await setBalance(1_000);
    expect(await take('a', 1, 100)).toMatchObject({ outcome: 'lease', epoch: 1, granted: 100, balance: 900 });
    // 900 / 4 = 225 at most.
    expect(await take('a', 1, 10_000)).toMatchObject({ outcome: 'lease', granted: 325, balance: 675 });
    expect(await take('b', 1, 10)).toMatchObject({ outcome: 'lease', granted: 10, balance: 665 });
  });

  it('near exhaustion pays each spend itself, recalls the other leases, and refuses once nothing is left', async () => {
    await setBalance(6);
    expect(await take('a', 1, 100)).toMatchObject({ outcome: 'lease', granted: 1, balance: 5 });
    // 5 / 4 = 1 ≥ cost 2 fails: paid from the balance; a's lease is out.
    expect(await take('b', 2, 100)).toMatchObject({ outcome: 'paid', balance: 3, others: 1 });
    expect(await take('b', 3, 0)).toMatchObject({ outcome: 'paid', balance: 0 });
    expect(await take('b', 1, 0)).toMatchObject({ outcome: 'refused', balance: 0, others: 1 });
    // a gives back its lease unspent: it can be paid from again, and then nothing is out.
    expect(await giveBack('a', 1, 1, 1)).toBe(1);
    expect(await take('b', 1, 0)).toMatchObject({ outcome: 'paid', balance: 0, others: 0 });
    expect(await take('b', 1, 0)).toMatchObject({ outcome: 'refused', others: 0 });
    // Cost 0 at a balance of 0 is refused too (a key at 0 always fails).
    expect(await take('b', 0, 0)).toMatchObject({ outcome: 'refused' });
  });

  it('asks without paying (a renewal ahead): a lease or nothing', async () => {
    await setBalance(3);
    expect(await take('a', 0, 10, false)).toMatchObject({ outcome: 'none', balance: 3 });
    expect((await row()).balance).toBe(3);
  });

  it('a key without credits on the cluster is unlimited', async () => {
    expect(await take('a', 1, 10)).toMatchObject({ outcome: 'unlimited' });
  });

  it('a due refill starts a new epoch at the refill amount, once per boundary, and is published', async () => {
    await setBalance(5, [50, 0, 1_000]);
    const t = await take('a', 1, 10, true, 2_000);
    expect(t).toMatchObject({ outcome: 'lease', epoch: 2, granted: 10, balance: 40 });
    expect(t.seq).toBeGreaterThan(0);
    const again = await take('a', 1, 10, true, 2_000);
    expect(again).toMatchObject({ epoch: 2, granted: 20, seq: 0 });
    // A balance above the amount (an increment) is kept, the boundary still noted.
    await setBalance(500, [50, 0, 1_000]);
    expect(await take('b', 1, 10, true, 2_000)).toMatchObject({ outcome: 'lease', epoch: 3, balance: 490 });
  });
});

describe('returns, refunds, adjustments, charges', () => {
  it('a return counts once, never more than was granted, and not for a voided epoch', async () => {
    await setBalance(100);
    await take('a', 1, 20);
    expect(await giveBack('a', 1, 15, 20)).toBe(95);
    expect(await giveBack('a', 1, 15, 20)).toBe(95);
    expect(await giveBack('a', 1, 500, 20)).toBe(100);
    await take('a', 1, 10);
    await setBalance(7);
    expect(await giveBack('a', 1, 30, 30)).toBe(7);
    expect(await row()).toEqual({ balance: 7, debt: 0, epoch: 2 });
  });

  it('a refund goes back in its epoch only', async () => {
    await setBalance(10);
    const paid = await take('a', 1, 0);
    expect(paid).toMatchObject({ outcome: 'paid', balance: 9 });
    const [r] = await postgres().query<{ b: string }>('SELECT kw_credits_refund($1, $2, $3, $4) AS b', ['a', key, 1, 1]);
    expect(Number(r?.b)).toBe(10);
    const [gone] = await postgres().query<{ b: string | null }>('SELECT kw_credits_refund($1, $2, $3, $4) AS b', ['a', key, 9, 1]);
    expect(gone?.b).toBeNull();
  });

  it('a decrement beyond the balance is a debt the returned leases pay; one beyond everything sets 0 in a new epoch', async () => {
    await setBalance(100);
    await take('a', 1, 25);
    await take('b', 1, 15);
    // Balance 60, leases 40 out: −70 leaves a debt of 10.
    await postgres().query('SELECT kw_credits_adjust($1, $2, $3, $4)', ['a', key, -70, TTL]);
    expect(await row()).toEqual({ balance: 0, debt: 10, epoch: 1 });
    // a spent 5 of its 25 and gives back 20: 10 pay the debt.
    expect(await giveBack('a', 1, 20, 25)).toBe(10);
    expect(await row()).toEqual({ balance: 10, debt: 0, epoch: 1 });
    await postgres().query('SELECT kw_credits_adjust($1, $2, $3, $4)', ['a', key, 5, TTL]);
    expect((await row()).balance).toBe(15);
    // −1000 is at least everything there may be: 0 at once, b's lease voided.
    await postgres().query('SELECT kw_credits_adjust($1, $2, $3, $4)', ['a', key, -1_000, TTL]);
    expect(await row()).toEqual({ balance: 0, debt: 0, epoch: 2 });
    expect(await giveBack('b', 1, 15, 15)).toBe(0);
  });

  it('an offline charge counts once by its id and floors at 0', async () => {
    await setBalance(10);
    const charge = async (id: string, amount: number): Promise<string | null | undefined> => (await postgres().query<{ b: string | null }>('SELECT kw_credits_charge($1, $2, $3) AS b', [id, key, amount]))[0]?.b;
    expect(await charge(`c-${n}`, 4)).toBe('6');
    expect(await charge(`c-${n}`, 4)).toBeNull();
    expect(await charge(`d-${n}`, 40)).toBe('0');
  });
});
