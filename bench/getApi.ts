// First scenario: wrk against apis.getApi on keyward and against the bare uWS echo server
// (same request, reply of the same size), in one run; prints both req/s and their ratio.
//   npm run bench:getapi [-- --duration 10 --connections 64]
import { runWrk, type WrkResult } from './lib/wrk.js';
import { startEcho, startKeyward } from './lib/procs.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const durationS = arg('duration', 10);
const connections = arg('connections', 64);

const keyward = await startKeyward();
const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${keyward.rootKey}` };
const base = `http://127.0.0.1:${keyward.port}`;
const created = await fetch(`${base}/v2/apis.createApi`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench-api' }) });
const apiId = ((await created.json()) as { data: { apiId: string } }).data.apiId;
const body = JSON.stringify({ apiId });
const sample = await (await fetch(`${base}/v2/apis.getApi`, { method: 'POST', headers, body })).text();

let kw: WrkResult;
let echo: WrkResult;
try {
  kw = runWrk({ url: `${base}/v2/apis.getApi`, body, headers, connections, threads: 1, durationS });
} finally {
  await keyward.stop();
}
const echoServer = await startEcho(Buffer.byteLength(sample));
try {
  echo = runWrk({ url: `http://127.0.0.1:${echoServer.port}/v2/apis.getApi`, body, headers, connections, threads: 1, durationS });
} finally {
  await echoServer.stop();
}

const row = (name: string, r: WrkResult) => `| ${name} | ${r.requestsPerSec.toFixed(0)} | ${r.latencyP50Ms.toFixed(3)} | ${r.latencyP99Ms.toFixed(3)} | ${r.non2xx + r.errors} |`;
process.stdout.write(
  [
    `wrk -t1 -c${connections} -d${durationS}s, POST ${Buffer.byteLength(body)}-byte body, ${Buffer.byteLength(sample)}-byte reply`,
    '| server | req/s | p50 ms | p99 ms | non-2xx + socket errors |',
    '|---|---|---|---|---|',
    row('keyward apis.getApi', kw),
    row('bare uWS echo', echo),
    `ratio keyward / uWS: ${(kw.requestsPerSec / echo.requestsPerSec).toFixed(3)}`,
  ].join('\n') + '\n',
);
if (kw.non2xx > 0) {
  process.stderr.write(`keyward answered ${kw.non2xx} non-2xx responses: the measurement is not of successful getApi calls\n`);
  process.exit(1);
}
