// The analytics worker seen from the serving threads: `startAnalytics` (main thread) starts
// it and turns on the engine's event buffer; every serving thread queries it through an
// `AnalyticsClient` over a MessagePort of its own (`portFor` makes one for a worker thread).
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { native } from '../engine/native.js';
import { rebuiltError } from '../errors/errors.js';
import type { Logger } from '../log.js';
import { DATABASE_FILE, STAT, STAT_SLOTS, type AnalyticsSettings, type QueryScope, type WorkerMessage } from './protocol.js';

/** A serving thread's way to the analytics worker. */
export class AnalyticsClient {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (rows: Record<string, unknown>[]) => void; reject: (err: unknown) => void }>();

  constructor(
    private readonly port: MessagePort,
    /** The worker's statistics (protocol.ts STAT), for /metrics. */
    readonly stats: Float64Array,
  ) {
    port.on('message', (msg: WorkerMessage) => {
      if (msg.type !== 'reply') return;
      const w = this.waiting.get(msg.reply.id);
      if (w === undefined) return;
      this.waiting.delete(msg.reply.id);
      if ('rows' in msg.reply) w.resolve(msg.reply.rows);
      else w.reject(rebuiltError(msg.reply.error));
    });
    // A thread waiting for nothing but idle replies must still be able to exit.
    port.unref();
  }

  /**
   * The rows of `query` within `scope`, or the ApiError that refused it. While it runs, the
   * analytics threads are at normal priority (native/src/priority.rs): raised from here, a
   * serving thread, so a starved worker does not hold the raise up.
   */
  query(query: string, scope: QueryScope, rootKeyId: string): Promise<Record<string, unknown>[]> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) this.port.ref();
      native.analyticsQueries(1);
      const done = (): void => {
        native.analyticsQueries(-1);
        if (this.waiting.size === 0) this.port.unref();
      };
      this.waiting.set(id, {
        resolve: (rows) => {
          done();
          resolve(rows);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      });
      this.port.postMessage({ type: 'query', request: { id, query, scope, rootKeyId } } satisfies WorkerMessage);
    });
  }

  /** /metrics lines of analytics ingestion (docs/http.md#metrics). */
  metrics(): string {
    const [recorded, dropped, waiting] = native.eventsCounts();
    const s = this.stats;
    return [
      ['keyward_analytics_events_recorded_total', 'counter', 'Events the hot calls recorded for analytics.', recorded],
      ['keyward_analytics_events_dropped_total', 'counter', 'Events dropped because the buffer was full (ingestion behind).', dropped],
      ['keyward_analytics_events_written_total', 'counter', 'Events written to the analytics database.', s[STAT.written] ?? 0],
      ['keyward_analytics_events_failed_total', 'counter', 'Events the analytics database refused (lost).', s[STAT.failed] ?? 0],
      ['keyward_analytics_buffered_bytes', 'gauge', 'Bytes of events waiting for the analytics worker.', waiting],
      ['keyward_analytics_lag_seconds', 'gauge', 'Age of the oldest event of the last batch when it was written.', (s[STAT.lagMs] ?? 0) / 1000],
      ['keyward_analytics_idle_priority', 'gauge', 'Whether the analytics threads run at SCHED_IDLE now (1), or at normal priority (0).', native.analyticsIdle() ? 1 : 0],
    ]
      .map(([name, type, help, value]) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`)
      .join('');
  }
}

export interface AnalyticsHost {
  /** The main thread's client. */
  readonly client: AnalyticsClient;
  /** A port for a serving worker thread (`clientOf` on that thread) and the shared statistics. */
  portFor(): { port: MessagePort; stats: SharedArrayBuffer };
  /** SIGTERM, before the server drains: no more queries, the running ones interrupted (503 shutting_down). */
  quiesce(): void;
  /** Writes what is buffered, closes the database and ends the worker (SIGTERM loses no event). */
  stop(): Promise<void>;
}

/** A client on a serving worker thread, from what `portFor` gave it. */
export function clientOf(port: MessagePort, stats: SharedArrayBuffer): AnalyticsClient {
  return new AnalyticsClient(port, new Float64Array(stats));
}

export async function startAnalytics(settings: AnalyticsSettings, log: Logger): Promise<AnalyticsHost> {
  const stats = new SharedArrayBuffer(STAT_SLOTS * 8);
  const worker = new Worker(fileURLToPath(new URL('./worker.js', import.meta.url)), { workerData: { settings, stats } });
  worker.on('message', (msg: WorkerMessage) => {
    if (msg.type === 'log') log[msg.level](msg.msg, msg.fields);
  });
  await new Promise<void>((resolve, reject) => {
    const onMessage = (msg: WorkerMessage): void => {
      if (msg.type === 'ready') {
        worker.off('message', onMessage);
        resolve();
      }
    };
    worker.on('message', onMessage);
    worker.once('error', (err) => {
      const file = join(settings.dataDir, DATABASE_FILE);
      // DuckDB's database is one process's: another keyward serving this data dir holds it.
      if (/Could not set lock|Conflicting lock/i.test(err.message)) {
        reject(new Error(`the analytics database ${file} is held by another process (another keyward serving this data dir?): ${err.message}\nSeveral servers may share a data dir, but only one of them records analytics: start the others with KEYWARD_ANALYTICS=off.`));
        return;
      }
      reject(new Error(`the analytics database ${file} could not be opened: ${err.message}\nThe keys' store is not affected. To serve again: move ${file} (and ${file}.wal, if there is one) out of the data dir and start with a new, empty analytics database (the events in the moved file stay readable with DuckDB), or start with KEYWARD_ANALYTICS=off.`));
    });
  });
  worker.on('error', (err) => log.error('analytics worker failed; analytics queries fail until the next start', { error: err.message }));
  native.eventsSet(settings.bufferBytes);
  const main = new MessageChannel();
  worker.postMessage({ type: 'port', port: main.port2 } satisfies WorkerMessage, [main.port2]);
  return {
    client: new AnalyticsClient(main.port1, new Float64Array(stats)),
    portFor() {
      const channel = new MessageChannel();
      worker.postMessage({ type: 'port', port: channel.port2 } satisfies WorkerMessage, [channel.port2]);
      return { port: channel.port1, stats };
    },
    quiesce() {
      worker.postMessage({ type: 'quiesce' } satisfies WorkerMessage);
    },
    async stop() {
      native.eventsSet(0);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 10_000);
        worker.on('message', (msg: WorkerMessage) => {
          if (msg.type === 'stopped') {
            clearTimeout(timer);
            resolve();
          }
        });
        worker.once('exit', () => resolve());
        worker.postMessage({ type: 'stop' } satisfies WorkerMessage);
      });
      await worker.terminate();
    },
  };
}

