// Child process for store.test.ts: opens the store another process has open, says
// "ready", then increments the shared counter `iterations` times (one transaction each),
// writes enough padding to grow the map past the parent's, stores a marker and exits.
// Usage: node childWriter.mjs <addon> <dir> <iterations>
import { createRequire } from 'node:module';

const [addon, dir, iterations] = process.argv.slice(2);
const native = createRequire(import.meta.url)(addon);
native.open(dir, false, 0, 64 * 1024);
process.stdout.write('ready\n');
for (let i = 0; i < Number(iterations); i++) {
  native.transaction(() => {
    const current = native.get('meta', 'counter');
    const next = Buffer.alloc(4);
    next.writeUInt32LE((current ? current.readUInt32LE(0) : 0) + 1);
    native.put('meta', 'counter', next);
  });
}
native.transaction(() => {
  for (let i = 0; i < 1000; i++) native.put('credits', `pad-${i}`, Buffer.alloc(1024, 1));
  native.put('apis', 'from-child', Buffer.from(`pid ${process.pid}`));
});
native.close();
