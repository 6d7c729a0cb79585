// How long `keyward export` and `keyward import` take (docs/operations.md, "Export and import"):
// a store of N keys (credits + one autoApply limit each, seeded as bench:check seeds them)
// exported by the CLI as an operator runs it (a process of its own, stdout to a file), the file
// imported into an empty data dir, and the imported store exported again, which must be the
// same bytes. Peak memory is each process's VmHWM.
//   npm run bench:transfer [-- --keys 1000000]
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DATA_FILE } from '../src/store/integrity.js';
import { benchTempDir, MAIN_JS } from './lib/procs.js';
import { seededDataDir } from './lib/seed.js';
import { arg } from './lib/report.js';

const keys = arg('keys', 1_000_000);
const CLI_JS = join(dirname(MAIN_JS), 'cli.js');
const MiB = 1024 * 1024;

interface Run {
  seconds: number;
  peakMiB: number;
  stdout: string;
  stderr: string;
}

/** The peak resident memory of a live process so far (VmHWM), in MiB; 0 once it is gone. */
function peakMiB(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Number(m[1]) / 1024;
  } catch {
    return 0;
  }
}

/** `keyward <args>` on `dataDir`, its stdout to `stdoutFile` if given. */
function runCli(args: string[], dataDir: string, stdoutFile?: string): Promise<Run> {
  const fd = stdoutFile === undefined ? undefined : openSync(stdoutFile, 'w');
  const started = performance.now();
  const child = spawn(process.execPath, [CLI_JS, ...args], { env: { ...process.env, KEYWARD_DATA_DIR: dataDir, KEYWARD_LOG_LEVEL: 'warn' }, stdio: ['ignore', fd ?? 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, peakMiB(child.pid ?? 0))), 50);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      const seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      if (fd !== undefined) closeSync(fd);
      if (code !== 0) reject(new Error(`keyward ${args.join(' ')} exited ${String(code)}: ${stderr}`));
      else resolve({ seconds, peakMiB: peak, stdout, stderr });
    });
  });
}

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const { dataDir, seedS } = await seededDataDir('keyward-bench-transfer-', 'transfer-bench', keys);

const work = benchTempDir('keyward-bench-transfer-files-');
const file = join(work, 'export.jsonl');
const exported = await runCli(['export'], dataDir, file);
const target = join(work, 'imported');
const imported = await runCli(['import', file], target);
const again = join(work, 'again.jsonl');
const reexported = await runCli(['export'], target, again);
const same = (await sha256(file)) === (await sha256(again));
if (!same) throw new Error('the imported store exported other bytes than the source');
const summary = JSON.parse(imported.stdout) as { imported: { keys: number; credits: number }; skipped: number };
if (summary.imported.keys !== keys) throw new Error(`imported ${summary.imported.keys} keys of ${keys}`);

const bytes = statSync(file).size;
const storeMiB = (dir: string): string => (statSync(join(dir, DATA_FILE)).size / MiB).toFixed(0);
process.stdout.write(
  [
    `keyward export / import of ${keys.toLocaleString('en-US')} keys (credits + 1 autoApply limit each; seeded in ${seedS.toFixed(1)} s); store ${storeMiB(dataDir)} MiB, export file ${(bytes / MiB).toFixed(0)} MiB (${(bytes / keys).toFixed(0)} bytes per key), imported store ${storeMiB(target)} MiB`,
    '',
    '| step (the CLI, a process of its own) | seconds | keys/s | peak RSS MiB |',
    '|---|---|---|---|',
    `| \`keyward export > file\` (snapshot copy + read + write) | ${exported.seconds.toFixed(2)} | ${(keys / exported.seconds).toFixed(0)} | ${exported.peakMiB.toFixed(0)} |`,
    `| \`keyward import file\` into an empty data dir (check pass + load) | ${imported.seconds.toFixed(2)} | ${(keys / imported.seconds).toFixed(0)} | ${imported.peakMiB.toFixed(0)} |`,
    `| \`keyward export\` of the imported store (same bytes: ${same ? 'yes' : 'no'}) | ${reexported.seconds.toFixed(2)} | ${(keys / reexported.seconds).toFixed(0)} | ${reexported.peakMiB.toFixed(0)} |`,
  ].join('\n') + '\n',
);
