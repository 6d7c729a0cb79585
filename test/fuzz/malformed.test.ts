// Malformed-request fuzzing over every procedure in ROUTES: whatever arrives, the answer is
// a complete JSON envelope, never a 5xx, and the server stays up. Seeded: set
// KEYWARD_FUZZ_SEED to replay a failure (the seed is in every failure message).
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/rpc/routes.js';
import { liveServer } from '../helpers/live.js';
import { call, expectOk, get } from '../helpers/server.js';

const SEED = Number(process.env.KEYWARD_FUZZ_SEED ?? 0x6b657977);
const REQUESTS = 2400;
const CONCURRENCY = 16;

const srv = liveServer();

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T;

const deepArray = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const deepObject = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

/** JSON texts of odd values, to be spliced in where a field's value goes. */
const ODD_VALUES: readonly (() => string)[] = [
  () => '1e308', () => '-1e308', () => '1e309', () => '-0', () => '0', () => '-1', () => '4294967296', () => '9007199254740993',
  () => '123456789012345678901234567890', () => '1.5', () => '5e-324', () => '-2147483649',
  () => '"NaN"', () => '"Infinity"', () => '"-Infinity"', () => '"1e308"', () => '""', () => '" "', () => '"\\u0000"',
  () => '"\\ud800"', () => '"\\udfff\\ud800"', () => '"💥"', () => '"a\\nb"', () => '"../../etc/passwd"', () => '"api_\\u0000x"',
  () => JSON.stringify('x'.repeat(70_000)), () => JSON.stringify('€'.repeat(5_000)), () => JSON.stringify('api_' + 'a'.repeat(300)),
  () => 'null', () => 'true', () => 'false', () => '[]', () => '{}', () => '[1,2,3]', () => '[null]', () => '{"":""}',
  () => '{"__proto__":{"polluted":true}}', () => '{"constructor":{"prototype":{"polluted":true}}}',
  () => deepArray(10_000), () => deepObject(10_000), () => deepArray(200), () => JSON.stringify(Array.from({ length: 2000 }, (_, i) => `p${i}`)),
];

/** A plausible value for a schema property, so that one mutation is the only thing wrong. */
function plausible(rng: Rng, schema: Record<string, unknown>): unknown {
  switch (schema.type) {
    case 'string':
      return typeof schema.pattern === 'string' && schema.pattern.includes('a-zA-Z0-9_]') ? `api_${Math.floor(rng() * 1e12)}` : 'abcdef';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return rng() < 0.5;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return 'abc';
  }
}

interface Case {
  procedure: string;
  body: Buffer;
  auth: string | undefined;
  contentType: string;
  what: string;
}

function makeCase(rng: Rng, i: number, rootKey: string): Case {
  const route = ROUTES[i % ROUTES.length] as (typeof ROUTES)[number];
  let procedure = route.procedure;
  if (procedure.startsWith('ratelimits.') && rng() < 0.5) procedure = procedure.replace(/^ratelimits\./, 'ratelimit.');
  const props = (route.request.properties ?? {}) as Record<string, Record<string, unknown>>;
  const names = Object.keys(props);
  const base: Record<string, unknown> = {};
  for (const n of (route.request.required ?? []) as string[]) base[n] = plausible(rng, props[n] ?? {});
  const baseText = JSON.stringify(base);
  const withField = (field: string, valueText: string): string => {
    const rest = baseText === '{}' ? '' : ',' + baseText.slice(1, -1);
    return `{${JSON.stringify(field)}:${valueText}${rest}}`;
  };
  const odd = pick(rng, ODD_VALUES);
  const field = names.length > 0 ? pick(rng, names) : 'x';
  const kinds: [string, () => string | Buffer][] = [
    ['odd value in a known field', () => withField(field, odd())],
    ['odd value in a known field', () => withField(field, odd())],
    ['odd value in a known field', () => withField(field, odd())],
    ['odd value in an unknown field', () => withField(pick(rng, ['x', 'meta', 'async', 'ratelimit', 'resources', '', ' ', 'apiId ', 'ÄPI']), odd())],
    ['prototype pollution key', () => withField(pick(rng, ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf']), pick(rng, ['{}', '{"polluted":true}', 'null', '1', '"x"', '{"prototype":{"polluted":true}}']))],
    ['a whole body of an odd value', () => odd()],
    ['an array for the object', () => `[${baseText}]`],
    ['empty body', () => pick(rng, ['', ' ', '\n', '\t\r\n'])],
    ['malformed JSON', () => pick(rng, ['{', '}', '{"a"', '{"a":}', "{'a':1}", 'NaN', 'Infinity', '-Infinity', 'undefined', '{"a":NaN}', '{} {}', `${baseText}x`, '{"a":1,}', '[1,]', '"\\x41"', '{"a":"\\u12"}', '\u0000', '01', '{"a":01}', '"unterminated'])],
    ['invalid UTF-8', () => {
      const bytes = Buffer.from(withField(field, '"XX"'));
      const at = bytes.indexOf('XX');
      const bad = pick(rng, [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf], [0xe2, 0x82]]);
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(bad), bytes.subarray(at + 2)]);
    }],
    ['duplicate keys', () => `{${JSON.stringify(field)}:1,${JSON.stringify(field)}:${odd()}}`],
    ['deeply nested value', () => withField(field, pick(rng, [deepArray(10_000), deepObject(10_000)]))],
    ['deeply nested body', () => pick(rng, [deepArray(10_000), deepObject(10_000), deepArray(100_000)])],
    ['many unknown fields', () => JSON.stringify(Object.fromEntries(Array.from({ length: 500 }, (_, k) => [`f${k}`, k])))],
    ['random bytes', () => Buffer.from(Array.from({ length: 1 + Math.floor(rng() * 64) }, () => Math.floor(rng() * 256)))],
  ];
  const [what, make] = pick(rng, kinds);
  const body = make();
  const authRoll = rng();
  const auth = authRoll < 0.85 ? `Bearer ${rootKey}` : authRoll < 0.9 ? undefined : authRoll < 0.95 ? 'Bearer nope_nope_nope_nope' : pick(rng, ['Basic abc', 'Bearer', `Bearer ${rootKey} x`, 'bearer\t' + rootKey]);
  const contentType = rng() < 0.97 ? 'application/json' : pick(rng, ['text/plain', 'application/json; charset=utf-8', 'application/JSON']);
  return { procedure, body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'), auth, contentType, what };
}

interface Outcome {
  status: number;
  text: string;
  error?: string;
}

function send(agent: http.Agent, port: number, c: Case): Promise<Outcome> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { 'Content-Type': c.contentType, 'Content-Length': c.body.length };
    if (c.auth !== undefined) headers.Authorization = c.auth;
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/v2/${c.procedure}`, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err) => resolve({ status: 0, text: '', error: err.message }));
    });
    req.on('error', (err) => resolve({ status: 0, text: '', error: err.message }));
    req.end(c.body);
  });
}

function problemWith(o: Outcome): string | undefined {
  if (o.error !== undefined) return `transport error: ${o.error}`;
  if (o.status >= 500) return `HTTP ${o.status}`;
  let json: { meta?: { requestId?: unknown }; data?: unknown; error?: { status?: unknown; errors?: unknown } };
  try {
    json = JSON.parse(o.text) as typeof json;
  } catch {
    return 'response is not JSON';
  }
  if (typeof json.meta?.requestId !== 'string' || !/^req_\w+$/.test(json.meta.requestId)) return 'no meta.requestId';
  if ((json.data === undefined) === (json.error === undefined)) return 'needs exactly one of data / error';
  if (o.status === 200 && json.data === undefined) return '200 without data';
  if (o.status !== 200 && json.error?.status !== o.status) return `error.status ${String(json.error?.status)} ≠ HTTP ${o.status}`;
  if (o.status === 400 && !Array.isArray(json.error?.errors)) return '400 without errors[]';
  return undefined;
}

async function runCases(port: number, cases: Case[]): Promise<{ failures: string[]; statuses: Map<number, number> }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    for (let i = next++; i < cases.length; i = next++) {
      const c = cases[i] as Case;
      const o = await send(agent, port, c);
      statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
      const problem = problemWith(o);
      if (problem !== undefined) {
        failures.push(`#${i} ${c.procedure} [${c.what}] auth=${c.auth === undefined ? 'none' : c.auth.slice(0, 12)} body=${JSON.stringify(c.body.subarray(0, 100).toString('latin1'))}${c.body.length > 100 ? `…(${c.body.length} bytes)` : ''} → ${problem}; response ${o.status} ${o.text.slice(0, 160)}`);
      }
    }
  }));
  agent.destroy();
  return { failures, statuses };
}

async function expectAlive(): Promise<void> {
  const server = srv();
  expect(server.child.exitCode).toBeNull();
  const live = await get(server, '/v2/liveness');
  expect(live.status).toBe(200);
  const api = expectOk(await call(server, 'apis.createApi', { name: 'after-fuzz' }));
  expect(expectOk(await call(server, 'apis.getApi', { apiId: api.apiId })).name).toBe('after-fuzz');
}

describe(`malformed requests (seed ${SEED})`, () => {
  it(`${REQUESTS} random malformed requests over every procedure: envelopes, no 5xx, server alive`, async () => {
    const server = srv();
    const rng = mulberry32(SEED);
    const cases = Array.from({ length: REQUESTS }, (_, i) => makeCase(rng, i, server.rootKey));
    const { failures, statuses } = await runCases(server.port, cases);
    expect(failures, `seed ${SEED}: ${failures.length} bad responses; first ones:\n${failures.slice(0, 12).join('\n')}`).toEqual([]);
    // The cases reached validation, auth and (some) handlers, not just one early exit.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(REQUESTS / 4);
    expect(statuses.get(401) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(415) ?? 0).toBeGreaterThan(0);
    await expectAlive();
  }, 90_000);

  it('every odd value in every top-level field of every procedure (systematic sweep)', async () => {
    const server = srv();
    const rng = mulberry32(SEED ^ 0x5eed);
    const cases: Case[] = [];
    for (const route of ROUTES) {
      const props = (route.request.properties ?? {}) as Record<string, Record<string, unknown>>;
      const base: Record<string, unknown> = {};
      for (const n of (route.request.required ?? []) as string[]) base[n] = plausible(rng, props[n] ?? {});
      for (const field of Object.keys(props)) {
        for (const odd of ODD_VALUES) {
          const rest = Object.entries(base).filter(([k]) => k !== field).map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`).join('');
          cases.push({ procedure: route.procedure, body: Buffer.from(`{${JSON.stringify(field)}:${odd()}${rest}}`), auth: `Bearer ${server.rootKey}`, contentType: 'application/json', what: `odd value in ${field}` });
        }
      }
    }
    expect(cases.length).toBeGreaterThan(ROUTES.length);
    const { failures } = await runCases(server.port, cases);
    expect(failures, `${failures.length} bad responses; first ones:\n${failures.slice(0, 12).join('\n')}`).toEqual([]);
    await expectAlive();
  }, 90_000);
});
