// How long the integrity check takes (docs/operations.md, "Integrity"): a store of N keys
// (credits + one autoApply limit each, as a real key space has), written through
// keys.createKey's handler, then `keyward check` run on it as an operator runs it (the CLI,
// a process of its own, pages and records in full), and the start-up check's sample within
// its default budget.
//   npm run bench:check [-- --keys 1000000]
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { native } from '../src/engine/native.js';
import { checkPages, checkRecords, DATA_FILE } from '../src/store/integrity.js';
import { DEFAULT_START_CHECK_MS } from '../src/config.js';
import { MAIN_JS } from './lib/procs.js';
import { seededDataDir } from './lib/seed.js';
import { arg } from './lib/report.js';

const keys = arg('keys', 1_000_000);

const { dataDir, seedS } = await seededDataDir('keyward-bench-check-', 'check-bench', keys);

// The CLI in full, as `keyward check --data-dir DIR` runs: its own process, a cold start included.
const cliStarted = performance.now();
const out = execFileSync(process.execPath, [join(dirname(MAIN_JS), 'cli.js'), 'check'], { env: { ...process.env, KEYWARD_DATA_DIR: dataDir }, encoding: 'utf8', maxBuffer: 1 << 24 });
const cliS = (performance.now() - cliStarted) / 1000;
const report = JSON.parse(out) as { ok: boolean; pages: number; records: number; usedBytes: number; seconds: number; problems: string[] };
if (!report.ok) throw new Error(`keyward check found problems in a store just written: ${report.problems.join('; ')}`);

// Each part alone, in this process.
let t = performance.now();
const pages = checkPages(dataDir, 0);
const pagesS = (performance.now() - t) / 1000;
native.open(dataDir, false, 0, statSync(join(dataDir, DATA_FILE)).size);
t = performance.now();
native.warm(3_600_000);
const warmS = (performance.now() - t) / 1000;
t = performance.now();
const records = checkRecords(0);
const recordsS = (performance.now() - t) / 1000;
native.close();

// The start-up check as serve runs it: pages with half the budget, then (after serve has read
// the store into memory, which it does before listening whether it checks or not) records
// with the other half.
t = performance.now();
const startPages = checkPages(dataDir, DEFAULT_START_CHECK_MS / 2);
let startS = (performance.now() - t) / 1000;
native.open(dataDir, false, 0, statSync(join(dataDir, DATA_FILE)).size);
native.warm(3_600_000);
t = performance.now();
const startRecords = checkRecords(DEFAULT_START_CHECK_MS / 2);
startS += (performance.now() - t) / 1000;
native.close();

const MiB = 1024 * 1024;
process.stdout.write(
  [
    `keyward check on a store of ${keys.toLocaleString('en-US')} keys (credits + 1 autoApply limit each; seeded in ${seedS.toFixed(1)} s); store ${(report.usedBytes / MiB).toFixed(0)} MiB in use, ${report.pages.toLocaleString('en-US')} pages, ${report.records.toLocaleString('en-US')} records`,
    '',
    '| check | seconds | what it covered |',
    '|---|---|---|',
    `| \`keyward check\` (CLI, own process, pages + records in full) | ${cliS.toFixed(2)} | reported ${report.seconds.toFixed(2)} s inside |`,
    `| pages alone (check.rs walk) | ${pagesS.toFixed(2)} | ${pages.pages.toLocaleString('en-US')} pages, complete: ${pages.complete} |`,
    `| reading the store into memory (native warm, as serve does before it listens) | ${warmS.toFixed(2)} | ${(report.usedBytes / MiB).toFixed(0)} MiB |`,
    `| records alone (decode + cross references) | ${recordsS.toFixed(2)} | ${records.records.toLocaleString('en-US')} records, complete: ${records.complete} |`,
    `| start-up check (KEYWARD_START_CHECK_MS=${DEFAULT_START_CHECK_MS}; the store already in memory) | ${startS.toFixed(2)} | pages complete: ${startPages.complete}, records ${startRecords.records.toLocaleString('en-US')} (complete: ${startRecords.complete}) |`,
  ].join('\n') + '\n',
);
