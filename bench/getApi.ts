// wrk against apis.getApi on keyward and against the bare uWS echo server (same request,
// reply of the same size), alternating for several rounds in one run; prints each round,
// the medians and the per-round ratios.
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

const echoServer = await startEcho(Buffer.byteLength(sample));
let report;
try {
  report = alternate(rounds, durationS, [
    {
      measured: { name: 'keyward apis.getApi', run: (seconds) => runWrk({ url: `${base}/v2/apis.getApi`, body, headers, connections, threads: 1, durationS: seconds }) },
      ceiling: { name: 'bare uWS echo', run: (seconds) => runWrk({ url: `http://127.0.0.1:${echoServer.port}/v2/apis.getApi`, body, headers, connections, threads: 1, durationS: seconds }) },
    },
  ]);
} finally {
  await keyward.stop();
  await echoServer.stop();
}
process.stdout.write([`wrk -t1 -c${connections} -d${durationS}s, POST ${Buffer.byteLength(body)}-byte body, ${Buffer.byteLength(sample)}-byte reply, alternating, ${rounds} rounds`, ...report.lines].join('\n') + '\n');
if (report.bad > 0) {
  process.stderr.write('non-2xx responses or socket errors: the measurement is not of successful getApi calls\n');
  process.exit(1);
}
