// Pauses the kernel's DAMON monitors (kdamond threads), where the machine runs any, while the
// suite measures: this VM's kernel runs one on physical memory (a `pageout` scheme, for the
// host's memory reclaim) that samples every 512 ms, and each sample stalls every process on
// the machine for about 2–3 ms. An open-loop run at a fixed rate counts that stall in every
// request it delays, whatever the server: against the do-nothing uWS ceiling at 35,000 req/s
// the p99 read 1.4–2.2 ms with it running and 0.27 ms with it paused (2026-11-23). Such a
// monitor is the platform's, not the server's, so the suite pauses it (as it holds the CPUs
// awake, cpuWake.ts) and its report says so, with that floor measured both ways.
//
// Contract: `pauseDamon()` turns off only the kdamonds that are on, and `release()` turns
// those back on. A watchdog process does the same if the bench dies before releasing (even by
// SIGKILL), so the machine is never left with its monitor off. Needs root to write the
// sysfs files; without it, or with no DAMON, nothing changes and `reason` says why. Monitors
// started by the DAMON_RECLAIM or DAMON_LRU_SORT modules are not under this interface (their
// module parameters) and are left alone.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const KDAMONDS = '/sys/kernel/mm/damon/admin/kdamonds';

export interface DamonPause {
  /** Some kdamond was on and is now paused. */
  paused: boolean;
  /** Why nothing was paused (no DAMON, none running, no permission); '' when paused. */
  reason: string;
  release(): void;
}

/** The state files of the kdamonds that are running (`on`) under `root`. */
export function runningKdamonds(root = KDAMONDS): string[] {
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  return names.map((n) => join(root, n, 'state')).filter((f) => {
    try {
      return readFileSync(f, 'utf8').trim() === 'on';
    } catch {
      return false;
    }
  });
}

export function pauseDamon(root = KDAMONDS): DamonPause {
  const running = runningKdamonds(root);
  if (running.length === 0) return { paused: false, reason: 'no DAMON monitor runs on this machine', release: () => undefined };
  const paused: string[] = [];
  const resume = (): void => {
    for (const f of paused.splice(0)) {
      try {
        writeFileSync(f, 'on');
      } catch {
        // Started again by someone else meanwhile, or gone: nothing to restore.
      }
    }
  };
  try {
    for (const f of running) {
      writeFileSync(f, 'off');
      paused.push(f);
    }
  } catch (err) {
    resume();
    return { paused: false, reason: `DAMON could not be paused (${(err as Error).message}; run the suite as root)`, release: () => undefined };
  }
  // The watchdog: reads a pipe from this process until it closes (this process ended, however)
  // and then turns the monitors back on. It waits in read(), so it costs no CPU meanwhile, where
  // a polling loop would fork `sleep` several times a second on the machine being measured.
  // The files go in as the script's arguments ("$@"), so no path needs quoting.
  const watchdog = spawn('sh', ['-c', 'cat > /dev/null; for f in "$@"; do echo on > "$f"; done', 'damon-watchdog', ...paused], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  watchdog.unref();
  watchdog.stdin?.on('error', () => undefined);
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return {
    paused: true,
    reason: '',
    release: () => {
      watchdog.kill('SIGKILL');
      watchdog.stdin?.destroy();
      resume();
    },
  };
}
