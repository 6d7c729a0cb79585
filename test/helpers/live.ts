// One live server per test file: `const srv = liveServer()` then `srv()` inside tests.
// With KEYWARD_TEST_CLUSTER set (test/cluster/conformance-*.test.ts set it), the server is a
// node of a 3-node cluster on a throwaway PostgreSQL (not the one that bootstraps it first),
// so a suite written for one node runs against a cluster unchanged.
import { afterAll, beforeAll } from 'vitest';
import { startServer, stopAll, type Server } from './server.js';
import { startCluster, type TestCluster } from './cluster.js';

export function liveServer(opts: Parameters<typeof startServer>[0] = {}): () => Server {
  let server: Server | undefined;
  let cluster: TestCluster | undefined;
  beforeAll(async () => {
    if (process.env.KEYWARD_TEST_CLUSTER === undefined) {
      server = await startServer(opts);
      return;
    }
    cluster = await startCluster(3, opts.env);
    server = cluster.nodes[1];
  });
  afterAll(async () => {
    await stopAll();
    cluster?.pg.stop();
  });
  return () => {
    if (server === undefined) throw new Error('server not started');
    return server;
  };
}
