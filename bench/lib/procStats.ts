// CPU and memory of the processes under test, from /proc: CPU seconds = utime + stime
// (clock ticks of 1/100 s) summed over the processes; RSS = VmRSS, sampled every 200 ms.
import { readFileSync } from 'node:fs';

const TICKS_PER_S = 100;

export interface ProcUsage {
  wallS: number;
  cpuS: number;
  /** CPU seconds per wall second: how many cores the processes kept busy. */
  busyCores: number;
  rssMaxMiB: number;
  /** All CPUs of the machine: busy CPU seconds per wall second (from /proc/stat). */
  machineBusyCores: number;
  /** The bench process itself (the Node load generators): CPU seconds per wall second. */
  benchCores: number;
  /** Bytes the processes sent to disk over the run (`diskWriteBytes`); NaN where unreadable. */
  diskBytes: number;
}

/** Busy clock ticks of the whole machine (user, nice, system, irq, softirq, steal). */
function machineTicks(): number {
  try {
    const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    return (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
  } catch {
    return 0;
  }
}

function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** A `<field>: N kB` line of /proc/<pid>/status, in KiB (0 when it cannot be read). */
function statusKiB(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

/**
 * Bytes process `pid` has caused to be sent to the block layer (`write_bytes` of
 * /proc/<pid>/io): its own writes and fsyncs, the background syncer thread's included; page
 * cache writes that nobody forced out yet are not counted. undefined where it cannot be read.
 */
export function diskWriteBytes(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = /^write_bytes:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m === null ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

export function rssKiB(pid: number): number {
  return statusKiB(pid, 'VmRSS');
}

/** Anonymous resident memory (heaps; not the store's mapped file) of a process, in bytes. */
export function rssAnonBytes(pid: number | undefined): number {
  return pid === undefined ? 0 : statusKiB(pid, 'RssAnon') * 1024;
}

export class ProcSampler {
  private readonly startTicks: number;
  private readonly startMs = performance.now();
  private readonly startMachine = machineTicks();
  private readonly startSelf = process.cpuUsage();
  private rssMax = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly startDisk: number;

  constructor(private readonly pids: number[]) {
    this.startTicks = pids.reduce((a, p) => a + cpuTicks(p), 0);
    this.startDisk = this.diskBytes();
    this.sampleRss();
    this.timer = setInterval(() => this.sampleRss(), 200);
  }

  /** Disk writes of all the processes so far; NaN when one cannot be read. */
  private diskBytes(): number {
    return this.pids.reduce((a, p) => a + (diskWriteBytes(p) ?? Number.NaN), 0);
  }

  private sampleRss(): void {
    this.rssMax = Math.max(this.rssMax, this.pids.reduce((a, p) => a + rssKiB(p), 0));
  }

  stop(): ProcUsage {
    clearInterval(this.timer);
    this.sampleRss();
    const wallS = (performance.now() - this.startMs) / 1000;
    const cpuS = (this.pids.reduce((a, p) => a + cpuTicks(p), 0) - this.startTicks) / TICKS_PER_S;
    const self = process.cpuUsage(this.startSelf);
    return {
      wallS,
      cpuS,
      busyCores: cpuS / wallS,
      rssMaxMiB: this.rssMax / 1024,
      machineBusyCores: (machineTicks() - this.startMachine) / TICKS_PER_S / wallS,
      benchCores: (self.user + self.system) / 1e6 / wallS,
      diskBytes: this.diskBytes() - this.startDisk,
    };
  }
}

/** CPU seconds of one process so far (for a process that exits: read before it does). */
export { cpuTicks };
