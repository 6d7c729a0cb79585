// What a killed keyward process left behind (a backup's partial dir, an export's copy of the
// store) is removed by a later one once the process that made it is gone.

/** Whether a process `pid` is alive (one this process may not signal counts as alive). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
