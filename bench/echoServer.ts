// The ceiling: a bare uWebSockets.js server that reads each POST body and answers with a
// fixed JSON body of the size keyward's reply has. Usage: echoServer.js <port> <replyBytes>
import { loadUws } from '../src/http/uws.js';

const port = Number(process.argv[2] ?? '0');
const replyBytes = Number(process.argv[3] ?? '64');
const filler = 'x'.repeat(Math.max(0, replyBytes - 13));
const reply = `{"data":"${filler}"}`;

const uws = loadUws() as unknown as {
  App(): {
    any(p: string, h: (res: BareRes, req: unknown) => void): unknown;
    listen(host: string, port: number, cb: (token: unknown) => void): unknown;
  };
  us_socket_local_port(token: unknown): number;
};
interface BareRes {
  onAborted(cb: () => void): void;
  onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void): void;
  cork(cb: () => void): void;
  writeStatus(s: string): BareRes;
  writeHeader(k: string, v: string): BareRes;
  end(body: string): void;
}

const app = uws.App();
app.any('/*', (res) => {
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
    process.stderr.write(`echo server: cannot listen on ${port}\n`);
    process.exit(1);
  }
  process.stdout.write(`echo listening on ${uws.us_socket_local_port(token)}\n`);
});
