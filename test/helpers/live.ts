// One live server per test file: `const srv = liveServer()` then `srv()` inside tests.
import { afterAll, beforeAll } from 'vitest';
import { startServer, stopAll, type Server } from './server.js';

export function liveServer(opts: Parameters<typeof startServer>[0] = {}): () => Server {
  let server: Server | undefined;
  beforeAll(async () => {
    server = await startServer(opts);
  });
  afterAll(stopAll);
  return () => {
    if (server === undefined) throw new Error('server not started');
    return server;
  };
}
