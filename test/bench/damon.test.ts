// Pausing the machine's DAMON monitors around open-loop runs (bench/lib/damon.ts), against a
// stand-in for /sys/kernel/mm/damon/admin/kdamonds: the same layout, in a temp dir.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pauseDamon, runningKdamonds } from '../../bench/lib/damon.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A kdamonds directory with one kdamond per given state. */
function kdamonds(...states: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'kdamonds-'));
  dirs.push(root);
  writeFileSync(join(root, 'nr_kdamonds'), `${states.length}\n`);
  states.forEach((s, i) => {
    mkdirSync(join(root, String(i)));
    writeFileSync(join(root, String(i), 'state'), `${s}\n`);
  });
  return root;
}

const state = (root: string, i: number): string => readFileSync(join(root, String(i), 'state'), 'utf8').trim();

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

describe('pausing DAMON', () => {
  it('turns off the running kdamonds only, and release turns those back on', () => {
    const root = kdamonds('on', 'off', 'on');
    expect(runningKdamonds(root)).toEqual([join(root, '0', 'state'), join(root, '2', 'state')]);
    const p = pauseDamon(root);
    expect(p.paused).toBe(true);
    expect([state(root, 0), state(root, 1), state(root, 2)]).toEqual(['off', 'off', 'off']);
    p.release();
    expect([state(root, 0), state(root, 1), state(root, 2)]).toEqual(['on', 'off', 'on']);
  });

  it('changes nothing and says why where no monitor runs', () => {
    const none = pauseDamon(join(tmpdir(), 'no-such-kdamonds'));
    expect(none).toMatchObject({ paused: false, reason: 'no DAMON monitor runs on this machine' });
    const root = kdamonds('off');
    expect(pauseDamon(root).paused).toBe(false);
    expect(state(root, 0)).toBe('off');
  });

  it('turns the monitors back on when the process that paused them is killed', async () => {
    const root = kdamonds('on');
    const lib = join(process.cwd(), 'dist', 'bench', 'lib', 'damon.js');
    // A process that pauses them, says so, and waits to be killed (SIGKILL: no handler runs).
    const child = spawn(process.execPath, ['--input-type=module', '-e', `import { pauseDamon } from ${JSON.stringify(lib)}; pauseDamon(${JSON.stringify(root)}); console.log('paused'); setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    expect(state(root, 0)).toBe('off');
    child.kill('SIGKILL');
    expect(await until(() => state(root, 0) === 'on', 5_000)).toBe(true);
  });
});
