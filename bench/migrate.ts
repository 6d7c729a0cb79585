// Moving in (docs/moving-in.md): N keys (default 1,000,000) imported through keys.migrateKeys
// over HTTP, in batches, while verifications of keys already in the store run open-loop at a
// fixed rate; the import's time and rate, and the verifications' latency in 5 s windows
// during the import (measured from their scheduled send time, so a stall counts in full).
//   npm run bench:migrate [-- --keys 1000000 --batch 500 --clients 6 --rate 2000]
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createKeys, post } from './lib/http.js';
import { rawPost, runOpenLoop, type LatencySummary } from './lib/openLoop.js';
import { MAIN_JS, startKeyward } from './lib/procs.js';
import { arg } from './lib/report.js';

const total = arg('keys', 1_000_000);
const batch = arg('batch', 500);
const clients = arg('clients', 6);
const rate = arg('rate', 2_000);
const presentKeys = arg('present', 10_000);
const WINDOW_S = 5;

const keyward = await startKeyward();
keyward.child.once('exit', (code, signal) => process.stderr.write(`keyward exited: ${code} ${signal}\n`));
const base = `http://127.0.0.1:${keyward.port}`;
try {
  const cli = (...args: string[]) => JSON.parse(execFileSync(process.execPath, [join(dirname(MAIN_JS), 'cli.js'), ...args], { env: { ...process.env, KEYWARD_DATA_DIR: keyward.dataDir }, encoding: 'utf8' })) as unknown;
  const [workspace] = cli('workspaces', 'list') as { workspaceId: string }[];
  if (workspace === undefined) throw new Error('no workspace');
  const { migrationId } = cli('migrations', 'create', '--workspace', workspace.workspaceId, '--algorithm', 'sha256') as { migrationId: string };
  // The hashes an old system kept: hex SHA-256 of keys nobody here knows. Drawn first: the
  // server closes keep-alive connections idle for 10 s, which undici may then reuse for a POST.
  const hashes = Array.from({ length: total }, () => createHash('sha256').update(randomBytes(24)).digest('hex'));
  const apiId = (await post(base, keyward.rootKey, 'apis.createApi', { name: 'moving-in' })).data.apiId as string;
  process.stderr.write(`creating ${presentKeys.toLocaleString('en-US')} keys to verify during the import…\n`);
  const present = await createKeys(base, keyward.rootKey, apiId, presentKeys);

  let next = 0;
  let migrated = 0;
  let failed = 0;
  let importDone = false;
  const importStarted = performance.now();
  const importing = Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        const from = next;
        next = Math.min(total, next + batch);
        const keys = hashes.slice(from, next).map((hash, i) => ({ hash, externalId: `customer_${(from + i) % 50_000}`, credits: { remaining: 1000 } }));
        const r = await post(base, keyward.rootKey, 'keys.migrateKeys', { migrationId, apiId, keys });
        if (r.status !== 200) throw new Error(`migrateKeys answered ${r.status}`);
        migrated += (r.data.migrated as unknown[]).length;
        failed += (r.data.failed as unknown[]).length;
      }
    }),
  ).then(() => {
    importDone = true;
    return (performance.now() - importStarted) / 1000;
  });

  const auth = `Bearer ${keyward.rootKey}`;
  let drawn = 0;
  const windows: LatencySummary[] = [];
  while (!importDone) {
    windows.push(await runOpenLoop({ port: keyward.port, rate, durationS: WINDOW_S, connections: 32, next: () => rawPost('/v2/keys.verifyKey', JSON.stringify({ key: present[drawn++ % present.length] }), auth) }));
    process.stderr.write(`  ${migrated.toLocaleString('en-US')} migrated\r`);
  }
  const importS = await importing;
  // The last window ran on past the import's end (unless it is the only one).
  const during = windows.length > 1 ? windows.slice(0, -1) : windows;
  const worst = during.reduce((a, b) => (b.p99Ms > a.p99Ms ? b : a));
  const lines = [
    `keys.migrateKeys over HTTP: ${total.toLocaleString('en-US')} keys (sha256 hashes, an externalId of 50,000 and credits each) in batches of ${batch}, ${clients} clients; keyward threads=1, durability=process`,
    `verifications of ${presentKeys.toLocaleString('en-US')} present keys (credits + 1 limit) alongside, open-loop at ${rate.toLocaleString('en-US')}/s in ${WINDOW_S} s windows`,
    '',
    '| | |',
    '|---|---|',
    `| import time | ${importS.toFixed(1)} s |`,
    `| keys migrated / failed | ${migrated.toLocaleString('en-US')} / ${failed.toLocaleString('en-US')} |`,
    `| import rate | ${Math.round(migrated / importS).toLocaleString('en-US')} keys/s |`,
    `| verify p99 per window during the import (ms) | ${during.map((w) => w.p99Ms.toFixed(1)).join(', ')} |`,
    `| verify p99, worst window / p50 there | ${worst.p99Ms.toFixed(1)} ms / ${worst.p50Ms.toFixed(1)} ms |`,
    `| verifications non-2xx + errors | ${windows.reduce((n, w) => n + w.non2xx + w.errors, 0)} |`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await keyward.stop();
}
