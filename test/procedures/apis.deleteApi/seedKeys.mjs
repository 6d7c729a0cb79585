// Child process for cascade.test.ts: writes N keys of one API straight into a data dir with
// the real store code (dist/src/store/keys.js saveKey inside direct.transact, batches of 1,000),
// while no server has the dir open. Prints {"key": <plaintext of the last key>, "keyId"}.
// Usage: node seedKeys.mjs <dataDir> <workspaceId> <apiId> <count>
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [dataDir, workspaceId, apiId, countText] = process.argv.slice(2);
const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist/src');
const load = (p) => import(pathToFileURL(path.join(dist, p)).href);
process.env.KEYWARD_DATA_DIR = dataDir;
const { loadConfig } = await load('config.js');
const { native } = await load('engine/native.js');
const { direct } = await load('store/db.js');
const { saveKey, keyHashBytes } = await load('store/keys.js');
const { generateKey } = await load('domain/keyMaterial.js');
const { newId } = await load('domain/ids.js');

const config = loadConfig();
native.open(config.dataDir, false, 0, config.initialMapBytes);
const count = Number(countText);
let last;
for (let done = 0; done < count; ) {
  const n = Math.min(1000, count - done);
  direct.transact(() => {
    for (let i = 0; i < n; i++) {
      const now = Date.now();
      const { key, start } = generateKey('bulk', 16);
      const id = newId('key', now);
      saveKey({ id, apiId, workspaceId, hash: keyHashBytes(key).toString('base64'), start, prefix: 'bulk', byteLength: 16, enabled: true, createdAtMs: now, permissions: [], roleIds: [], ratelimits: [] }, undefined);
      last = { key, keyId: id };
    }
  });
  done += n;
}
native.sync();
native.close();
process.stdout.write(JSON.stringify(last));
