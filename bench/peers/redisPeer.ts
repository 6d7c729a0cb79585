// The peer a user would build instead of keyward: node:http in front of Redis (ioredis with
// auto-pipelining), the checks done atomically by Lua scripts (EVALSHA):
//   POST /v2/keys.verifyKey        hash lookup (k:<base64 SHA-256 of the key>), disabled /
//                                  expiry check, autoApply sliding-window limit, credit decrement
//   POST /v2/ratelimits.limit      the same sliding window as keyward (two epoch-aligned
//                                  buckets, previous weighted by the unelapsed fraction)
//   POST /rlflex/v2/ratelimits.limit  rate-limiter-flexible's RateLimiterRedis (fixed window)
//   POST /v2/keys.createKey        a new key hash (HSET)
// Replies have the shape of keyward's. Usage: redisPeer.js <port> <redisPort> <rootKey>
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { keyHashKey } from './redisKeys.js';
import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

const port = Number(process.argv[2] ?? '0');
const redisPort = Number(process.argv[3] ?? '6379');
const auth = `Bearer ${process.argv[4] ?? ''}`;

// The sliding window shared by both scripts (same formula as keyward's native/src/window.rs):
// effective = current + floor(previous · (duration − elapsed) / duration) + cost.
const WINDOW_LUA = `
local function window(base, limit, dur, cost, now)
  local seq = math.floor(now / dur)
  local ck = base .. ':' .. seq
  local v = redis.call('MGET', ck, base .. ':' .. (seq - 1))
  local cur = tonumber(v[1] or '0')
  local prev = tonumber(v[2] or '0')
  local eff = cur + math.floor(prev * (dur - (now - seq * dur)) / dur) + cost
  local reset = (seq + 1) * dur
  if limit <= 0 or eff > limit then return false, 0, reset, ck end
  return true, limit - eff, reset, ck
end
local function admit(ck, cost, dur)
  redis.call('INCRBY', ck, cost)
  redis.call('PEXPIRE', ck, dur * 2)
end
`;

const VERIFY_LUA = `${WINDOW_LUA}
local h = redis.call('HMGET', KEYS[1], 'id', 'enabled', 'expires', 'credits', 'rlLimit', 'rlDuration')
if not h[1] then return {'NOT_FOUND'} end
if h[2] == '0' then return {'DISABLED', h[1]} end
local now = tonumber(ARGV[1])
local exp = tonumber(h[3] or '0')
if exp > 0 and exp <= now then return {'EXPIRED', h[1]} end
local ok, remaining, reset, ck, limit, dur = true, 0, 0, nil, 0, 0
if h[5] then
  limit = tonumber(h[5])
  dur = tonumber(h[6])
  ok, remaining, reset, ck = window('w:' .. h[1] .. ':' .. dur, limit, dur, 1, now)
  if not ok then return {'RATE_LIMITED', h[1], h[4] or '', limit, dur, 0, reset} end
end
local credits = ''
if h[4] then
  if tonumber(h[4]) <= 0 then return {'USAGE_EXCEEDED', h[1], '0'} end
  credits = tostring(redis.call('HINCRBY', KEYS[1], 'credits', -1))
end
if ck then admit(ck, 1, dur) end
if h[5] then return {'VALID', h[1], credits, limit, dur, remaining, reset} end
return {'VALID', h[1], credits}
`;

const LIMIT_LUA = `${WINDOW_LUA}
local limit, dur, cost, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ok, remaining, reset, ck = window(KEYS[1], limit, dur, cost, now)
if ok then admit(ck, cost, dur) end
return {ok and 1 or 0, remaining, reset}
`;


const redis = new Redis({ host: '127.0.0.1', port: redisPort, enableAutoPipelining: true, lazyConnect: true });
let requestSeq = 0;
const requestId = (): string => `req_${(++requestSeq).toString(36)}`;
const limiters = new Map<string, RateLimiterRedis>();

function reply(res: ServerResponse, status: number, data: unknown): void {
  const body = JSON.stringify(status === 200 ? { meta: { requestId: requestId() }, data } : { meta: { requestId: requestId() }, error: data });
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

type Body = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

async function verify(sha: string, body: Body): Promise<unknown> {
  const out = (await redis.evalsha(sha, 1, keyHashKey(str(body.key)), Date.now())) as (string | number)[];
  const [code, keyId, credits, limit, duration, remaining, reset] = out;
  if (code === 'NOT_FOUND') return { valid: false, code };
  const data: Record<string, unknown> = { valid: code === 'VALID', code, keyId, enabled: code !== 'DISABLED' };
  if (credits !== undefined && credits !== '') data.credits = Number(credits);
  if (limit !== undefined) data.ratelimits = [{ name: 'requests', limit, duration, remaining, reset, exceeded: code === 'RATE_LIMITED', autoApply: true }];
  return data;
}

async function limit(sha: string, body: Body): Promise<unknown> {
  const lim = num(body.limit, 0);
  const [ok, remaining, reset] = (await redis.evalsha(sha, 1, `rl:${str(body.namespace)}:${str(body.identifier)}`, lim, num(body.duration, 60_000), num(body.cost, 1), Date.now())) as number[];
  return { success: ok === 1, limit: lim, remaining, reset };
}

async function limitFlexible(body: Body): Promise<unknown> {
  const lim = num(body.limit, 0);
  const duration = num(body.duration, 60_000);
  const name = `${str(body.namespace)}:${lim}:${duration}`;
  let limiter = limiters.get(name);
  if (limiter === undefined) {
    limiter = new RateLimiterRedis({ storeClient: redis, points: lim, duration: Math.max(1, Math.round(duration / 1000)), keyPrefix: `rlf:${name}` });
    limiters.set(name, limiter);
  }
  try {
    const r = await limiter.consume(str(body.identifier), num(body.cost, 1));
    return { success: true, limit: lim, remaining: r.remainingPoints, reset: Date.now() + r.msBeforeNext };
  } catch (err) {
    if (err instanceof RateLimiterRes) return { success: false, limit: lim, remaining: 0, reset: Date.now() + err.msBeforeNext };
    throw err;
  }
}

async function createKey(body: Body): Promise<unknown> {
  const key = randomBytes(16).toString('base64url');
  const keyId = `key_${randomBytes(10).toString('hex')}`;
  const fields: Record<string, string | number> = { id: keyId, apiId: str(body.apiId), enabled: 1, expires: num(body.expires, 0), createdAt: Date.now() };
  const credits = body.credits as { remaining?: number } | undefined;
  if (credits?.remaining !== undefined) fields.credits = credits.remaining;
  const rl = (body.ratelimits as { limit: number; duration: number; autoApply?: boolean }[] | undefined)?.find((r) => r.autoApply === true);
  if (rl !== undefined) {
    fields.rlLimit = rl.limit;
    fields.rlDuration = rl.duration;
  }
  await redis.hset(keyHashKey(key), fields);
  return { keyId, key };
}

await redis.connect();
const verifySha = (await redis.script('LOAD', VERIFY_LUA)) as string;
const limitSha = (await redis.script('LOAD', LIMIT_LUA)) as string;

const server = createServer((req, res) => {
  if (req.method !== 'POST') return reply(res, 405, { title: 'Method Not Allowed' });
  if (req.headers.authorization !== auth) return reply(res, 401, { title: 'Unauthorized' });
  readBody(req)
    .then(async (text) => {
      const body = JSON.parse(text) as Body;
      switch (req.url) {
        case '/v2/keys.verifyKey':
          return reply(res, 200, await verify(verifySha, body));
        case '/v2/ratelimits.limit':
          return reply(res, 200, await limit(limitSha, body));
        case '/rlflex/v2/ratelimits.limit':
          return reply(res, 200, await limitFlexible(body));
        case '/v2/keys.createKey':
          return reply(res, 200, await createKey(body));
        default:
          return reply(res, 404, { title: 'Not Found' });
      }
    })
    .catch((err: unknown) => reply(res, 500, { title: 'Internal Server Error', detail: (err as Error).message }));
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`redis peer listening on ${typeof addr === 'object' && addr !== null ? addr.port : 0}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  redis.disconnect();
  process.exit(0);
});
