// The ceiling: a bare uWebSockets.js server (the HTTP layer keyward uses) that reads each
// POST body and answers with a fixed JSON body of the size keyward's reply has for that
// path. Usage: ceilingServer.js <port> '{"/v2/keys.verifyKey":312,"default":64}'
import { loadUws } from '../../src/http/uws.js';

const port = Number(process.argv[2] ?? '0');
const sizes = JSON.parse(process.argv[3] ?? '{}') as Record<string, number>;
const replyOf = (bytes: number): string => `{"data":"${'x'.repeat(Math.max(0, bytes - 11))}"}`;
const replies = new Map<string, string>(Object.entries(sizes).map(([path, bytes]) => [path, replyOf(bytes)]));
const fallback = replies.get('default') ?? replyOf(64);

const uws = loadUws() as unknown as {
  App(): {
    any(p: string, h: (res: BareRes, req: BareReq) => void): unknown;
    listen(host: string, port: number, cb: (token: unknown) => void): unknown;
  };
  us_socket_local_port(token: unknown): number;
};
interface BareReq {
  getUrl(): string;
}
interface BareRes {
  onAborted(cb: () => void): void;
  onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void): void;
  cork(cb: () => void): void;
  writeStatus(s: string): BareRes;
  writeHeader(k: string, v: string): BareRes;
  end(body: string): void;
}

const app = uws.App();
app.any('/*', (res, req) => {
  const reply = replies.get(req.getUrl()) ?? fallback;
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((_chunk, isLast) => {
    if (!isLast || aborted) return;
    res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(reply));
  });
});
app.listen('127.0.0.1', port, (token) => {
  if (!token) {
    process.stderr.write(`ceiling server: cannot listen on ${port}\n`);
    process.exit(1);
  }
  process.stdout.write(`ceiling listening on ${uws.us_socket_local_port(token)}\n`);
});
