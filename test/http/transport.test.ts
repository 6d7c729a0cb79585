// The HTTP layer (src/http/uws.ts): every transport error uses the error envelope, the GET
// endpoints, request ids, metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createApi, expectError, expectOk, get, REQUEST_ID, startServer, stopAll, type Server } from '../helpers/server.js';
import { request as httpRequest } from 'node:http';
import { exchange, postHead, rawRequest } from '../helpers/raw.js';

const MAX_BODY_BYTES = 4096;
let server: Server;
let slow: Server;

beforeAll(async () => {
  [server, slow] = await Promise.all([
    startServer({ env: { KEYWARD_MAX_BODY_BYTES: String(MAX_BODY_BYTES) } }),
    startServer({ env: { KEYWARD_REQUEST_TIMEOUT_MS: '300' } }),
  ]);
});
afterAll(stopAll);

function jsonHeaders(s: Server, extra: Record<string, string> = {}): Record<string, string> {
  return { 'Content-Type': 'application/json', Authorization: `Bearer ${s.rootKey}`, ...extra };
}

describe('envelopes', () => {
  it('success: meta.requestId and data, nothing else', async () => {
    const res = await call(server, 'apis.createApi', { name: 'envelope-api' });
    const data = expectOk(res);
    expect(Object.keys(res.json as object).sort()).toEqual(['data', 'meta']);
    expect(Object.keys(res.json.meta as object)).toEqual(['requestId']);
    expect(data).toMatchObject({ name: 'envelope-api' });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('error: meta + error{title, detail, status, type}, no data', async () => {
    const res = await call(server, 'apis.getApi', { apiId: 'api_doesnotexist' });
    const error = expectError(res, 404, 'api_not_found');
    expect(Object.keys(res.json as object).sort()).toEqual(['error', 'meta']);
    expect(error.title).toBe('Not Found');
    expect(error.detail).toContain('api_doesnotexist');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('requestIds are req_… and unique per request (errors and successes alike)', async () => {
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? call(server, 'apis.createApi', { name: `ids-${i}` }) : call(server, 'apis.getApi', { apiId: 'api_nope_nope' }))));
    const ids = results.map((r) => r.json.meta.requestId as string);
    for (const id of ids) expect(id).toMatch(REQUEST_ID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('every error type URL serves a 200 HTML page', async () => {
    const seen = new Set<string>();
    const responses = [
      await call(server, 'apis.getApi', { apiId: 'api_missing_one' }),
      await call(server, 'apis.getApi', { nope: 1 }),
      await call(server, 'apis.getApi', {}, { rootKey: null }),
      await call(server, 'apis.getApi', {}, { method: 'PUT' }),
      await call(server, 'nope.nope', {}),
    ];
    for (const res of responses) {
      const type = res.json.error.type as string;
      expect(type).toMatch(/^https?:\/\//);
      seen.add(type);
      const url = new URL(type);
      // The page is served by the daemon itself at that path, on the port it bound (the
      // test server is started with KEYWARD_PORT=0), so the type URL can be fetched as is.
      expect(url.origin).toBe(server.url);
      const page = await fetch(type);
      expect(page.status, type).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await page.text();
      expect(html).toContain(url.pathname.split('/').pop());
    }
    expect(seen.size).toBe(responses.length);
  });

  it('an unknown error page is a 404 envelope', async () => {
    const res = await get(server, '/docs/errors/keyward/nope/nope');
    expectError(res, 404);
  });
});

describe('routing and methods', () => {
  it('unknown procedure → 404 envelope', async () => {
    for (const proc of ['apis.nope', 'nope.createApi', 'apis', 'ratelimit.nope', 'ratelimits.nope', '']) {
      const res = await call(server, proc, {});
      expectError(res, 404, 'procedure_not_found');
    }
  });

  it('a path with UTF-8 in it is named as sent in the 404 detail', async () => {
    const res = await rawRequest(server.port, [Buffer.from(postHead('ключ.createApi', { ...jsonHeaders(server), 'Content-Length': '2' }) + '{}')]);
    expect(res.status).toBe(404);
    expect(res.json.error.detail).toContain("'ключ.createApi'");
    const page = await rawRequest(server.port, [Buffer.from('GET /ключ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')]);
    expect(page.json.error.detail).toContain('/ключ.');
  });

  it('unknown top-level path → 404 envelope', async () => {
    expectError(await get(server, '/nope'), 404);
    expectError(await get(server, '/v1/apis.createApi'), 404);
  });

  it('non-POST to a procedure → 405 with Allow: POST', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await call(server, 'apis.createApi', { name: 'abc' }, { method });
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('POST to liveness → 405 with Allow: GET, HEAD', async () => {
    const res = await fetch(`${server.url}/v2/liveness`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('HEAD on the GET pages: the status and headers of GET, no body', async () => {
    for (const path of ['/v2/liveness', '/openapi.json', '/metrics']) {
      const res = await fetch(`${server.url}${path}`, { method: 'HEAD' });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toBe((await fetch(`${server.url}${path}`)).headers.get('content-type'));
      expect(Number(res.headers.get('content-length')), path).toBeGreaterThan(0);
      expect(await res.text(), path).toBe('');
    }
  });

  it('HEAD answers carry no body and keep the connection usable (GET page, procedure path, unknown path)', async () => {
    const liveness = 'GET /v2/liveness HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    for (const [path, status] of [['/v2/liveness', 200], ['/v2/keys.verifyKey', 405], ['/nowhere', 404]] as const) {
      const head = `HEAD ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
      // Pipelined in one write, and again with the GET sent after the HEAD's answer.
      for (const parts of [[head + liveness], [head, 150, liveness]]) {
        const stream = await exchange(server.port, parts, /"keyward is alive"\}\}$/);
        const [first = '', second = ''] = stream.split(/(?=HTTP\/1\.1 )/);
        expect(first, `${path}: ${stream}`).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
        expect(first, path).toMatch(/\r\nContent-Length: [1-9]\d*\r\n/i);
        expect(first.endsWith('\r\n\r\n'), `${path}: HEAD answer has a body: ${first}`).toBe(true);
        expect(second, path).toMatch(/^HTTP\/1\.1 200 /);
      }
    }
  });

  it('liveness responses carry a fresh requestId each time, like every other response', async () => {
    const a = await get(server, '/v2/liveness');
    const b = await get(server, '/v2/liveness');
    expect(a.json.meta.requestId).toMatch(REQUEST_ID);
    expect(a.json.meta.requestId).not.toBe(b.json.meta.requestId);
  });

  it('pipelined requests on one connection are answered in order', async () => {
    const body = (apiId: string): string => JSON.stringify({ apiId });
    const head = (len: number): string => postHead('apis.getApi', { ...jsonHeaders(server), 'Content-Length': String(len) });
    const first = body('api_pipelined_one');
    // The raw helper returns the first response; the second must follow it on the same socket.
    const res = await rawRequest(server.port, [head(first.length) + first + head(2) + '{}']);
    expect(res.status).toBe(404);
    expect(res.json.error.detail).toContain('api_pipelined_one');
  });

  // uWebSockets.js closes a connection when a request comes behind one whose reply has not
  // left yet. A read's reply waits for nothing another connection's write changed: three reads
  // pipelined while other clients write are answered, however their turns fall.
  it("pipelined reads are answered while other connections' writes share their turns", async () => {
    const apiId = await createApi(server);
    const { key } = expectOk(await call(server, 'keys.createKey', { apiId })) as { key: string };
    const verify = JSON.stringify({ key });
    const request = postHead('keys.verifyKey', { ...jsonHeaders(server), 'Content-Length': String(verify.length) }) + verify;
    let writing = true;
    const writers = Array.from({ length: 4 }, async () => {
      while (writing) expectOk(await call(server, 'keys.createKey', { apiId }));
    });
    try {
      for (let i = 0; i < 100; i++) {
        const received = await exchange(server.port, [request.repeat(3)], /(?:HTTP\/1\.1 200 [\s\S]*?"valid":true[\s\S]*?){3}/);
        expect(received.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
      }
    } finally {
      writing = false;
      await Promise.all(writers);
    }
  });

  it('GET /v2/liveness needs no auth', async () => {
    const res = await get(server, '/v2/liveness');
    expect(res.status).toBe(200);
    expect(res.json.meta.requestId).toMatch(/^req_/);
    expect(res.json.data).toBeDefined();
  });
});

describe('content type and body', () => {
  it('missing Content-Type → 415', async () => {
    const res = await call(server, 'apis.createApi', {}, { headers: { 'Content-Type': '' }, rawBody: '{"name":"abc"}' });
    expectError(res, 415, 'unsupported_media_type');
  });

  it('non-JSON Content-Type → 415', async () => {
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', 'multipart/form-data']) {
      const res = await call(server, 'apis.createApi', { name: 'abcd' }, { headers: { 'Content-Type': ct } });
      expectError(res, 415, 'unsupported_media_type');
    }
  });

  it('application/json with a UTF-8 (or US-ASCII) charset parameter is accepted; another charset → 415', async () => {
    for (const ct of ['application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'Application/JSON; charset=utf8', 'application/json; foo=bar', 'application/json; charset=US-ASCII']) {
      expectOk(await call(server, 'apis.createApi', { name: 'charset' }, { headers: { 'Content-Type': ct } }));
    }
    for (const ct of ['application/json; charset=latin1', 'application/json; charset=utf-16', 'application/json; charset=ascii-ish']) {
      expectError(await call(server, 'apis.createApi', { name: 'charset' }, { headers: { 'Content-Type': ct } }), 415, 'unsupported_media_type');
    }
  });

  it('a compressed body (Content-Encoding other than identity) → 415, on the hot procedures too; identity is accepted', async () => {
    for (const encoding of ['gzip', 'br', 'deflate', 'gzip, identity']) {
      const res = await call(server, 'apis.createApi', { name: 'encoded' }, { headers: { 'Content-Encoding': encoding } });
      expect(expectError(res, 415, 'unsupported_media_type').detail).toContain('uncompressed');
      expectError(await call(server, 'keys.verifyKey', { key: 'sk_encoded' }, { headers: { 'Content-Encoding': encoding } }), 415, 'unsupported_media_type');
    }
    expectOk(await call(server, 'apis.createApi', { name: 'identity' }, { headers: { 'Content-Encoding': 'Identity' } }));
  });

  it('a second Content-Encoding header after an identity one is read too → 415', async () => {
    const body = '{"name":"twice"}';
    const head = `POST /v2/apis.createApi HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${server.rootKey}\r\n`;
    const res = await rawRequest(server.port, [`${head}Content-Encoding: identity\r\nContent-Encoding: gzip\r\nContent-Length: ${body.length}\r\n\r\n${body}`]);
    expect(res.status).toBe(415);
    expect((await rawRequest(server.port, [`${head}Content-Encoding: identity\r\nContent-Length: ${body.length}\r\n\r\n${body}`])).status).toBe(200);
  });

  it('malformed JSON → 400 malformed_json with errors[]', async () => {
    for (const raw of ['{', '{"name":', 'nope', '{"name":"abc",}', "{'name':'abc'}"]) {
      const res = await call(server, 'apis.createApi', undefined, { rawBody: raw });
      const error = expectError(res, 400, 'malformed_json');
      expect(error.errors?.length).toBeGreaterThan(0);
    }
  });

  it('empty body → 400 malformed_json', async () => {
    for (const raw of ['', '   ']) {
      const res = await call(server, 'apis.createApi', undefined, { rawBody: raw });
      expectError(res, 400, 'malformed_json');
    }
  });

  it('invalid UTF-8 → 400 malformed_json', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"ab'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('c"}')]);
    const res = await call(server, 'apis.createApi', undefined, { rawBody: bytes });
    expectError(res, 400, 'malformed_json');
  });

  it('schema violation → 400 invalid_input naming the field', async () => {
    const res = await call(server, 'apis.createApi', { name: 'abc', bogusField: 1 });
    const error = expectError(res, 400, 'invalid_input');
    expect(error.errors?.some((e) => e.message.includes('bogusField'))).toBe(true);
  });

  it('body of exactly the limit is read; one byte over is 413', async () => {
    const pad = (n: number): string => {
      const base = JSON.stringify({ name: '' });
      return JSON.stringify({ name: 'x'.repeat(n - base.length) });
    };
    const exact = await call(server, 'apis.createApi', undefined, { rawBody: pad(MAX_BODY_BYTES) });
    // Read in full and validated: name is too long for the schema → 400, not 413.
    expectError(exact, 400, 'invalid_input');
    const over = await call(server, 'apis.createApi', undefined, { rawBody: pad(MAX_BODY_BYTES + 1) });
    expectError(over, 413, 'request_body_too_large');
  });

  it('413 from a declared Content-Length without sending the body', async () => {
    const res = await rawRequest(server.port, [postHead('apis.createApi', { ...jsonHeaders(server), 'Content-Length': String(50 * 1024 * 1024) })]);
    expect(res.status).toBe(413);
    expect(res.json.error.status).toBe(413);
    expect(res.json.error.type).toMatch(/\/request_body_too_large$/);
    expect(res.json.meta.requestId).toMatch(REQUEST_ID);
  });

  it("100 oversized bodies sent with Content-Length by Node's http client all read the 413 (no EPIPE, no reset)", async () => {
    const body = Buffer.alloc(1_500_000, 'x');
    const one = (): Promise<string> =>
      new Promise((resolve) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: server.port, method: 'POST', path: '/v2/apis.createApi', agent: false, headers: { ...jsonHeaders(server), 'Content-Length': String(body.length) } },
          (res) => {
            const parts: Buffer[] = [];
            res.on('data', (c: Buffer) => parts.push(c));
            res.on('end', () => resolve(`${res.statusCode} ${(JSON.parse(Buffer.concat(parts).toString()) as { error: { type: string } }).error.type.split('/').pop()}`));
          },
        );
        req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
        req.end(body);
      });
    const answers = await Promise.all(Array.from({ length: 100 }, one));
    expect(answers.filter((a) => a !== '413 request_body_too_large')).toEqual([]);
    // The connection a dropped body was read from stays usable, and the server serves on.
    expectOk(await call(server, 'apis.createApi', { name: 'after-oversized' }));
  }, 30_000);

  it('413 from a chunked body without Content-Length', async () => {
    const chunk = 'x'.repeat(1024);
    const parts: (string | number)[] = [postHead('apis.createApi', { ...jsonHeaders(server), 'Transfer-Encoding': 'chunked' }), `${(1).toString(16)}\r\n{\r\n`];
    for (let i = 0; i < 8; i++) parts.push(`${chunk.length.toString(16)}\r\n${chunk}\r\n`, 5);
    parts.push('0\r\n\r\n');
    const res = await rawRequest(server.port, parts);
    expect(res.status).toBe(413);
    expect(res.json.error.type).toMatch(/\/request_body_too_large$/);
  });

  it('a small chunked body is accepted', async () => {
    const body = JSON.stringify({ name: 'chunked-api' });
    const res = await rawRequest(server.port, [
      postHead('apis.createApi', { ...jsonHeaders(server), 'Transfer-Encoding': 'chunked' }),
      `5\r\n${body.slice(0, 5)}\r\n`,
      20,
      `${(body.length - 5).toString(16)}\r\n${body.slice(5)}\r\n0\r\n\r\n`,
    ]);
    expect(res.status).toBe(200);
    expect(res.json.data.name).toBe('chunked-api');
  });

  it('a body that stops arriving → 408 envelope, and the server keeps serving', async () => {
    const res = await rawRequest(slow.port, [postHead('apis.createApi', { ...jsonHeaders(slow), 'Content-Length': '100' }), '{"name":"sta'], 10_000);
    expect(res.status).toBe(408);
    expect(res.json.error.status).toBe(408);
    expect(res.json.error.type).toMatch(/\/request_timeout$/);
    expect(res.json.meta.requestId).toMatch(REQUEST_ID);
    expectOk(await call(slow, 'apis.createApi', { name: 'after-timeout' }));
  });

  it('headers only, no body at all, then stall → 408', async () => {
    const res = await rawRequest(slow.port, [postHead('apis.createApi', { ...jsonHeaders(slow), 'Content-Length': '20' })], 10_000);
    expect(res.status).toBe(408);
  });
});

describe('metrics', () => {
  it('counts requests by procedure and status', async () => {
    const before = await get(server, '/metrics');
    expect(before.status).toBe(200);
    const count = (text: string, proc: string, status: number): number => {
      const m = new RegExp(`^keyward_requests_total\\{procedure="${proc.replace('.', '\\.')}",status="${status}"\\} (\\d+)$`, 'm').exec(text);
      return m === null ? 0 : Number(m[1]);
    };
    const ok0 = count(before.text, 'apis.getApi', 200);
    const nf0 = count(before.text, 'apis.getApi', 404);
    const apiId = (expectOk(await call(server, 'apis.createApi', { name: 'metrics-api' })) as { apiId: string }).apiId;
    for (let i = 0; i < 3; i++) expectOk(await call(server, 'apis.getApi', { apiId }));
    for (let i = 0; i < 2; i++) expectError(await call(server, 'apis.getApi', { apiId: 'api_missing_metrics' }), 404);
    const after = await get(server, '/metrics');
    expect(after.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(after.text).toContain('# TYPE keyward_requests_total counter');
    expect(count(after.text, 'apis.getApi', 200)).toBe(ok0 + 3);
    expect(count(after.text, 'apis.getApi', 404)).toBe(nf0 + 2);
    expect(count(after.text, 'apis.createApi', 200)).toBeGreaterThan(0);
  });

  it('counts verifications by outcome, rate-limit decisions (each limit of a multiLimit) and credits spent', async () => {
    const value = (text: string, series: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
    };
    const SERIES = ['keyward_verifications_total{outcome="VALID"}', 'keyward_verifications_total{outcome="USAGE_EXCEEDED"}', 'keyward_verifications_total{outcome="NOT_FOUND"}', 'keyward_ratelimit_decisions_total{passed="true"}', 'keyward_ratelimit_decisions_total{passed="false"}', 'keyward_credits_spent_total'];
    const read = async (): Promise<number[]> => {
      const text = (await get(server, '/metrics')).text;
      expect(text).toContain('# TYPE keyward_verifications_total counter');
      return SERIES.map((s) => value(text, s));
    };
    const before = await read();
    const apiId = (expectOk(await call(server, 'apis.createApi', { name: 'decision-metrics' })) as { apiId: string }).apiId;
    const { key } = expectOk(await call(server, 'keys.createKey', { apiId, credits: { remaining: 5 } })) as { key: string };
    expect(expectOk(await call(server, 'keys.verifyKey', { key, credits: { cost: 3 } }))).toMatchObject({ code: 'VALID' });
    expect(expectOk(await call(server, 'keys.verifyKey', { key, credits: { cost: 3 } }))).toMatchObject({ code: 'USAGE_EXCEEDED' });
    expect(expectOk(await call(server, 'keys.verifyKey', { key: `${key}nope` }))).toMatchObject({ code: 'NOT_FOUND' });
    const limit = { namespace: 'decision-metrics', identifier: 'u1', limit: 1, duration: 60_000 };
    expect(expectOk(await call(server, 'ratelimits.limit', limit))).toMatchObject({ success: true });
    expect(expectOk(await call(server, 'ratelimits.limit', limit))).toMatchObject({ success: false });
    expect(expectOk(await call(server, 'ratelimits.multiLimit', [{ ...limit, identifier: 'u2' }, limit]))).toMatchObject({ passed: false });
    const after = await read();
    expect(after.map((v, i) => v - (before[i] as number))).toEqual([1, 1, 1, 2, 2, 3]);
  });
});
