// Worker thread for store.test.ts: loads the addon in this thread, opens the store the
// main thread already has open (a no-op for the same dir) and increments one counter
// `iterations` times, one transaction each. Never calls close(): the store is process-wide.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

const { addon, dir, iterations } = workerData;
const native = createRequire(import.meta.url)(addon);
native.open(dir, false, 0, 64 * 1024);
for (let i = 0; i < iterations; i++) {
  native.transaction(() => {
    const current = native.get('meta', 'counter');
    const next = Buffer.alloc(4);
    next.writeUInt32LE((current ? current.readUInt32LE(0) : 0) + 1);
    native.put('meta', 'counter', next);
  });
}
parentPort.postMessage('done');
