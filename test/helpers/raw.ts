// Byte-exact HTTP/1.1 over a raw socket, for what fetch cannot express: chunked bodies,
// stalled bodies, lying Content-Length, invalid UTF-8.
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  /** The server closed the connection after this response. */
  closed: boolean;
}

/** Parses the first complete HTTP response in `buf`, or undefined while incomplete. */
export function parseResponse(buf: Buffer): RawResponse | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? NaN);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? '0');
  const body = buf.subarray(end + 4);
  if (body.length < length) return undefined;
  const text = body.subarray(0, length).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers, body: text, json, closed: false };
}

/**
 * Opens a connection, writes each part (a number part = pause that many ms), and resolves with
 * the first response, or rejects if the connection closes without one or `timeoutMs` passes.
 */
export function rawRequest(port: number, parts: (string | Buffer | number)[], timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let result: RawResponse | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no response within ${timeoutMs} ms; received: ${buf.toString('latin1').slice(0, 300)}`));
    }, timeoutMs);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      result ??= parseResponse(buf);
      if (result !== undefined) {
        // Give the server a moment to close (or not) so `closed` is meaningful.
        setTimeout(() => {
          clearTimeout(timer);
          socket.destroy();
          if (result !== undefined) resolve(result);
        }, 50);
      }
    });
    socket.on('close', () => {
      if (result !== undefined) {
        result.closed = true;
        return;
      }
      clearTimeout(timer);
      reject(new Error(`connection closed without a response; received: ${buf.toString('latin1').slice(0, 300)}`));
    });
    socket.on('error', () => {
      /* surfaced by close */
    });
    writeParts(socket, parts, () => result !== undefined);
  });
}

/**
 * Once `socket` connects, writes each part in turn (a number part = pause that many ms),
 * stopping when the socket is destroyed or `done()` says the answer is in.
 */
function writeParts(socket: net.Socket, parts: readonly (string | Buffer | number)[], done: () => boolean): void {
  socket.once('connect', () => {
    void (async () => {
      for (const part of parts) {
        if (socket.destroyed || done()) return;
        if (typeof part === 'number') await new Promise((r) => setTimeout(r, part));
        else socket.write(part);
      }
    })();
  });
}

export function postHead(procedure: string, headers: Record<string, string>): string {
  const lines = [`POST /v2/${procedure} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return lines.join('\r\n') + '\r\n\r\n';
}

/**
 * Writes `parts` on one connection (a number part = pause that many ms) and resolves with
 * everything received once it matches `until`; rejects if the connection closes first or
 * `timeoutMs` passes. For exchanges `rawRequest` cannot parse (HEAD answers, several answers).
 */
export function exchange(port: number, parts: (string | number)[], until: RegExp, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no match within ${timeoutMs} ms; received: ${received.slice(0, 600)}`));
    }, timeoutMs);
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      if (!until.test(received)) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(received);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`connection closed; received: ${received.slice(0, 600)}`));
    });
    socket.on('error', () => {
      /* surfaced by close */
    });
    writeParts(socket, parts, () => false);
  });
}
