// A cluster node with several serving threads: each thread keeps the shared store's replica
// (the place is re-read inside each batch, so they never apply a change twice) and writes
// through PostgreSQL; what one thread writes, the node's other threads and other nodes see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectOk, stopAll, type Server } from '../helpers/server.js';
import { eventually, startCluster, type TestCluster } from '../helpers/cluster.js';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster(1);
});
afterAll(async () => {
  await stopAll();
  cluster?.pg.stop();
});

describe('a cluster node with two serving threads', () => {
  it('serves writes and verifications on both threads; another node sees them', async () => {
    const multi = await cluster.node('threads', { env: { KEYWARD_THREADS: '2' } });
    const single = cluster.nodes[0] as Server;
    const apiId = (expectOk(await call(multi, 'apis.createApi', { name: 'threads' })) as { apiId: string }).apiId;
    // Connections spread over the threads (SO_REUSEPORT): many writes, each read back at once.
    const made = await Promise.all(Array.from({ length: 40 }, async () => {
      const { key, keyId } = expectOk(await call(multi, 'keys.createKey', { apiId })) as { key: string; keyId: string };
      expectOk(await call(multi, 'keys.getKey', { keyId }));
      return key;
    }));
    for (const key of made) {
      expect((expectOk(await call(multi, 'keys.verifyKey', { key })) as { valid: boolean }).valid).toBe(true);
      await eventually(async () => (expectOk(await call(single, 'keys.verifyKey', { key })) as { valid: boolean }).valid);
    }
    const { key } = expectOk(await call(single, 'keys.createKey', { apiId })) as { key: string };
    for (let i = 0; i < 8; i++) await eventually(async () => (expectOk(await call(multi, 'keys.verifyKey', { key })) as { valid: boolean }).valid);
  });
});
