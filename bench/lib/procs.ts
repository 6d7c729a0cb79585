// Starting and stopping the processes a bench measures (keyward, the uWS ceiling).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';

const distBench = dirname(dirname(fileURLToPath(import.meta.url)));
export const MAIN_JS = join(distBench, '..', 'src', 'main.js');

export interface Proc {
  child: ChildProcess;
  port: number;
  stop(): Promise<void>;
}

function waitFor(child: ChildProcess, pattern: RegExp, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 30 s: ${err}`)), 30_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}: ${err}`));
    });
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export async function startKeyward(env: Record<string, string> = {}): Promise<Proc & { rootKey: string; dataDir: string }> {
  const dataDir = env.KEYWARD_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'keyward-bench-'));
  const rootKey = env.KEYWARD_ROOT_KEY ?? `kwroot_bench_${randomBytes(12).toString('hex')}`;
  const child = spawn(process.execPath, [MAIN_JS], {
    env: { ...process.env, KEYWARD_PORT: '0', KEYWARD_LOG_LEVEL: 'warn', ...env, KEYWARD_DATA_DIR: dataDir, KEYWARD_ROOT_KEY: rootKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await waitFor(child, /listening on http:\/\/[^:]+:(\d+)/, 'keyward');
  return { child, port, rootKey, dataDir, stop: stopper(child) };
}

export async function startEcho(replyBytes: number): Promise<Proc> {
  const child = spawn(process.execPath, [join(distBench, 'echoServer.js'), '0', String(replyBytes)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await waitFor(child, /echo listening on (\d+)/, 'echo server');
  return { child, port, stop: stopper(child) };
}
