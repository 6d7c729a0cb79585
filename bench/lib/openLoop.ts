// Open-loop HTTP/1.1 load generator (wrk2-style): requests are due on a fixed schedule
// (i / rate seconds after the start) whether or not earlier ones were answered. A due
// request goes out on an idle keep-alive connection, or waits in a queue when every
// connection is busy; its latency is counted from the *scheduled* time, so a server stall
// shows up in the percentiles instead of slowing the generator down (no coordinated
// omission). A second histogram counts from the actual send (service time).
// Limits: one Node thread; timers fire at ~1 ms granularity, so a request may leave up to
// ~1 ms after its scheduled time (reported as sendLag); it saturates at the rate the
// calibration step of the suite measures.
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import * as hdr from 'hdr-histogram-js';

export interface OpenLoopRun {
  port: number;
  /** Offered load, requests per second. */
  rate: number;
  durationS: number;
  connections: number;
  /** Builds one complete raw HTTP/1.1 request. */
  next: () => string;
  /** Called about every 250 ms with completed responses so far. */
  onTick?: (completed: number, elapsedS: number) => void;
}

export interface LatencySummary {
  offeredRps: number;
  /** Requests sent per second of the run (below offeredRps when the generator fell behind). */
  sentRps: number;
  sent: number;
  completedRps: number;
  completed: number;
  non2xx: number;
  errors: number;
  /** Requests still unanswered 5 s after the schedule ended (counted as errors too). */
  timeouts: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** Same percentiles counted from the actual send (hides queueing; for comparison only). */
  serviceP50Ms: number;
  serviceP99Ms: number;
  /** p99 of (actual send − scheduled time) for requests sent on an idle connection: the generator's own timing error. */
  sendLagP99Ms: number;
  /** HdrHistogram (µs, from the scheduled time), compressed base64. */
  histogram: string;
}

function newHistogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
}

interface Conn {
  sock: Socket;
  scheduled: number;
  sent: number;
  buf: Buffer | null;
}

function openConn(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port, noDelay: true });
    sock.once('connect', () => resolve(sock));
    sock.once('error', reject);
  });
}

/** Length of a complete response at the start of `buf`, or -1 when more bytes are needed. */
function responseLength(buf: Buffer): number {
  const headerEnd = buf.indexOf('\r\n\r\n');
  if (headerEnd < 0) return -1;
  const head = buf.toString('latin1', 0, headerEnd);
  const m = /content-length:\s*(\d+)/i.exec(head);
  const total = headerEnd + 4 + (m === null ? 0 : Number(m[1]));
  return buf.length >= total ? total : -1;
}

export async function runOpenLoop(run: OpenLoopRun): Promise<LatencySummary> {
  const hist = newHistogram();
  const service = newHistogram();
  const lag = newHistogram();
  const conns: Conn[] = [];
  for (let i = 0; i < run.connections; i++) conns.push({ sock: await openConn(run.port), scheduled: 0, sent: 0, buf: null });
  const idle: Conn[] = [...conns];
  const queue: number[] = [];
  let queueHead = 0;
  let completed = 0;
  let non2xx = 0;
  let errors = 0;
  let sentCount = 0;
  let sentInWindow = 0;
  const total = Math.max(1, Math.round(run.rate * run.durationS));
  const intervalMs = 1000 / run.rate;
  let scheduledCount = 0;
  let start = 0;
  let finish: (() => void) | undefined;

  const send = (c: Conn, scheduled: number, now: number): void => {
    c.scheduled = scheduled;
    c.sent = now;
    sentCount++;
    if (now - start <= run.durationS * 1000) sentInWindow++;
    c.sock.write(run.next());
  };
  const done = (): boolean => scheduledCount >= total && completed + errors >= total;
  const tick = (): void => {
    if (start === 0) return;
    const now = performance.now();
    const due = Math.min(total, Math.floor((now - start) / intervalMs) + 1);
    while (scheduledCount < due) {
      const scheduled = start + scheduledCount * intervalMs;
      scheduledCount++;
      const c = idle.pop();
      if (c === undefined) queue.push(scheduled);
      else {
        lag.recordValue(Math.max(1, Math.round((now - scheduled) * 1000)));
        send(c, scheduled, now);
      }
    }
  };
  for (const c of conns) {
    c.sock.on('data', (chunk: Buffer) => {
      c.buf = c.buf === null ? chunk : Buffer.concat([c.buf, chunk]);
      const len = responseLength(c.buf);
      if (len < 0) return;
      const now = performance.now();
      if (c.buf[9] !== 0x32) non2xx++; // "HTTP/1.1 2xx"
      c.buf = null;
      completed++;
      hist.recordValue(Math.max(1, Math.round((now - c.scheduled) * 1000)));
      service.recordValue(Math.max(1, Math.round((now - c.sent) * 1000)));
      tick();
      if (queueHead < queue.length) {
        const scheduled = queue[queueHead++] ?? now;
        if (queueHead > 4096 && queueHead * 2 > queue.length) {
          queue.splice(0, queueHead);
          queueHead = 0;
        }
        send(c, scheduled, now);
      } else idle.push(c);
      if (done()) finish?.();
    });
    c.sock.on('error', () => {
      errors++;
      if (done()) finish?.();
    });
  }

  start = performance.now();
  const timer = setInterval(tick, 1);
  const ticker = setInterval(() => run.onTick?.(completed, (performance.now() - start) / 1000), 250);
  tick();
  await new Promise<void>((resolve) => {
    finish = resolve;
    setTimeout(resolve, run.durationS * 1000 + 5000);
  });
  const elapsedS = (performance.now() - start) / 1000;
  clearInterval(timer);
  clearInterval(ticker);
  const timeouts = total - completed - errors;
  const end = performance.now();
  // Unanswered requests count with their age, so a stall is not hidden.
  for (const c of conns) if (c.sock.readyState === 'open' && !idle.includes(c)) hist.recordValue(Math.round((end - c.scheduled) * 1000));
  for (const c of conns) c.sock.destroy();
  const ms = (h: hdr.Histogram, p: number): number => h.getValueAtPercentile(p) / 1000;
  const summary: LatencySummary = {
    offeredRps: run.rate,
    sentRps: sentInWindow / run.durationS,
    sent: sentCount,
    completedRps: completed / elapsedS,
    completed,
    non2xx,
    errors: errors + timeouts,
    timeouts,
    p50Ms: ms(hist, 50),
    p90Ms: ms(hist, 90),
    p99Ms: ms(hist, 99),
    p999Ms: ms(hist, 99.9),
    maxMs: hist.maxValue / 1000,
    serviceP50Ms: ms(service, 50),
    serviceP99Ms: ms(service, 99),
    sendLagP99Ms: ms(lag, 99),
    histogram: hdr.encodeIntoCompressedBase64(hist),
  };
  hist.destroy();
  service.destroy();
  lag.destroy();
  return summary;
}

/** A raw HTTP/1.1 POST with a JSON body. */
export function rawPost(path: string, body: string, authorization: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
