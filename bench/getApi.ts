// wrk against apis.getApi on keyward and against the bare uWS echo server (same request,
// reply of the same size), alternating for several rounds in one run; prints each round,
// the medians and the per-round ratios. Also the same call with an unknown root key (every
// reply a 401): what a client with a wrong or revoked key costs the server.
//   npm run bench:getapi [-- --duration 10 --connections 64 --rounds 3]
import { runWrk } from './lib/wrk.js';
import { startEcho, startKeyward } from './lib/procs.js';
import { alternate, arg } from './lib/report.js';

const durationS = arg('duration', 10);
const connections = arg('connections', 64);
const rounds = arg('rounds', 3);

const keyward = await startKeyward();
const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${keyward.rootKey}` };
const base = `http://127.0.0.1:${keyward.port}`;
const created = await fetch(`${base}/v2/apis.createApi`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench-api' }) });
const apiId = ((await created.json()) as { data: { apiId: string } }).data.apiId;
const body = JSON.stringify({ apiId });
const sample = await (await fetch(`${base}/v2/apis.getApi`, { method: 'POST', headers, body })).text();

const wrongHeaders = { ...headers, Authorization: `Bearer ${keyward.rootKey}_unknown` };
const refusal = await (await fetch(`${base}/v2/apis.getApi`, { method: 'POST', headers: wrongHeaders, body })).text();
if (!refusal.includes('root_key_not_found')) throw new Error(`expected a 401 root_key_not_found, got ${refusal}`);

const echoServer = await startEcho(Buffer.byteLength(sample));
const refusalEcho = await startEcho(Buffer.byteLength(refusal));
const getApi = (port: number, h: Record<string, string>) => (seconds: number) => runWrk({ url: `http://127.0.0.1:${port}/v2/apis.getApi`, body, headers: h, connections, threads: 1, durationS: seconds });
let report;
try {
  report = alternate(rounds, durationS, [
    { measured: { name: 'keyward apis.getApi', run: getApi(keyward.port, headers) }, ceiling: { name: 'bare uWS echo', run: getApi(echoServer.port, headers) } },
    {
      measured: { name: 'keyward apis.getApi, unknown root key (401)', run: getApi(keyward.port, wrongHeaders), refused: true },
      ceiling: { name: `bare uWS echo (${Buffer.byteLength(refusal)}-byte reply)`, run: getApi(refusalEcho.port, wrongHeaders) },
    },
  ]);
} finally {
  await keyward.stop();
  await echoServer.stop();
  await refusalEcho.stop();
}
process.stdout.write([`wrk -t1 -c${connections} -d${durationS}s, POST ${Buffer.byteLength(body)}-byte body, ${Buffer.byteLength(sample)}-byte reply (${Buffer.byteLength(refusal)}-byte 401), alternating, ${rounds} rounds`, ...report.lines].join('\n') + '\n');
if (report.bad > 0) {
  process.stderr.write('unexpected replies (non-2xx, or a 2xx to the unknown root key) or socket errors: the measurement is not of what it names\n');
  process.exit(1);
}
