// Keeps the CPUs out of their sleep states while latency is measured, as latency benchmarks
// do (tuned's latency-performance profile, cyclictest): a PM QoS request of 0 µs on
// /dev/cpu_dma_latency, held as long as the file stays open, lets the kernel's idle loop only
// poll. Without it, on a VM an idle vCPU halts and the host may take milliseconds to run it
// again when a packet arrives: that wake-up latency, not the server measured, then decides
// the p99 of an open-loop run at a fraction of peak load. Needs root (the device is 0600);
// without it the hold is reported as not taken and latency is measured as the machine is.
import { closeSync, openSync, writeSync } from 'node:fs';

export interface CpuWakeHold {
  held: boolean;
  /** Why the hold could not be taken (when `held` is false). */
  reason: string;
  release(): void;
}

export function holdCpusAwake(): CpuWakeHold {
  try {
    const fd = openSync('/dev/cpu_dma_latency', 'r+');
    const zero = Buffer.alloc(4); // a binary s32: the largest wake-up latency allowed, µs
    writeSync(fd, zero);
    return { held: true, reason: '', release: () => closeSync(fd) };
  } catch (err) {
    return { held: false, reason: (err as Error).message, release: () => undefined };
  }
}
