// keyward serve: config → open store → bootstrap → serve on KEYWARD_THREADS threads.
// SIGTERM/SIGINT: stop accepting, finish in-flight requests, sync and close the store, exit 0.
import { Worker, isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { ConfigError, hostUrl, loadConfig, type Config } from './config.js';
import { native } from './engine/native.js';
import { bootstrap, isBootstrapped } from './bootstrap.js';
import { PostgresUnavailable } from './cluster/postgres.js';
import { createLogger, type Logger } from './log.js';
import { newMetrics, openStore, serveThread, startCluster, threadServices } from './serve.js';
import { startHeartbeat } from './cluster/node.js';
import { startWindowSweeper } from './store/sweeper.js';
import { checkPages, checkRecords, hasStore, lostStoreProblem, unreadableStoreProblem } from './store/integrity.js';
import { refuseBackup } from './store/backup.js';
import { deletedApiIds } from './store/apis.js';
import { direct } from './store/db.js';
import { pendingUnlinkings } from './store/cascades.js';
import { clientOf, startAnalytics } from './analytics/host.js';

const DRAIN_TIMEOUT_MS = 10_000;
const SWEEP_INTERVAL_MS = 1_000;
/** How long a start may spend bringing the store into memory before it listens. */
const WARM_BUDGET_MS = 10_000;

interface WorkerInit {
  config: Config;
  metrics: SharedArrayBuffer;
  /** This serving thread's index (1 … threads − 1; the main thread is 0). */
  thread: number;
  /** The process's soft limit of open descriptors (raised by the main thread). */
  descriptorsLimit: number;
  /** This thread's way to the analytics worker (analytics/host.ts portFor); absent: analytics off. */
  analytics?: { port: MessagePort; stats: SharedArrayBuffer };
}

async function runWorker(init: WorkerInit): Promise<void> {
  openStore(init.config);
  const thread = threadServices(init.config, createLogger(init.config.logLevel), true, init.analytics === undefined ? undefined : clientOf(init.analytics.port, init.analytics.stats));
  await startCluster(thread.cluster);
  const server = await serveThread(init.config, newMetrics(init.config.threads, init.metrics, init.thread), thread, init.descriptorsLimit);
  parentPort?.postMessage({ listening: server.port });
  parentPort?.on('message', (msg: unknown) => {
    if (msg === 'drain') void server.drain(DRAIN_TIMEOUT_MS).then(() => parentPort?.postMessage('drained'));
  });
}

/**
 * uWS binds with SO_REUSEPORT (that is how serving threads share the port), so a second
 * keyward on the same port would silently split the traffic. Probe with an exclusive bind
 * first and refuse to start when the port is taken (or the host cannot be listened on).
 */
function assertPortFree(host: string, port: number): Promise<void> {
  // Port 0 too: the probe then finds a host that does not resolve or is not this machine's.
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => reject(new Error(`could not listen on ${host}:${port} (KEYWARD_HOST, KEYWARD_PORT): ${err.code === 'EADDRINUSE' ? 'the port is in use' : err.message}`)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * Before it listens, the server has the store's pages in memory (as far as the budget goes):
 * opening drops them from the page cache and only starts reading them back, and requests
 * served meanwhile would wait for the disk, page by page.
 */
function warmStore(log: Logger): void {
  const started = performance.now();
  const { usedBytes, readBytes } = native.warm(WARM_BUDGET_MS);
  const fields = { usedBytes, readBytes, ms: Math.round(performance.now() - started) };
  if (readBytes < usedBytes) log.warn('the store did not fit in the start-up budget; the rest is read on demand', fields);
  else log.info('store in memory', fields);
}

/** A damaged store is never served: the start stops here, naming what is wrong and the way back. */
function refuseDamage(dataDir: string, problems: readonly string[]): void {
  if (problems.length === 0) return;
  throw new Error(
    `the store in ${dataDir} is damaged, so keyward will not serve it:\n  - ${problems.join('\n  - ')}\n` +
      `Restore the last backup (keyward restore <backup> --data-dir ${dataDir} --force; docs/operations.md), and see \`keyward check --data-dir ${dataDir}\` for the whole report.`,
  );
}

export async function runServer(config: Config): Promise<void> {
  await assertPortFree(config.host, config.port);
  const log = createLogger(config.logLevel);
  // Every client connection holds a descriptor: as many as the system lets this process have.
  const [descriptorsLimit, descriptorsHard] = native.raiseFileLimit();
  log.info(`descriptors: soft limit raised to ${descriptorsLimit} (hard ${descriptorsHard})`, { soft: descriptorsLimit, hard: descriptorsHard });
  refuseBackup(config.dataDir);
  // A data dir with no store yet (or that is no directory, which openStore reports) has nothing to check.
  refuseDamage(config.dataDir, [lostStoreProblem(config.dataDir)].filter((p) => p !== undefined));
  const checked = config.startCheckMs > 0 && hasStore(config.dataDir);
  if (checked) refuseDamage(config.dataDir, checkPages(config.dataDir, config.startCheckMs / 2).problems);
  try {
    openStore(config);
  } catch (err) {
    const unreadable = unreadableStoreProblem(err);
    if (unreadable !== undefined) refuseDamage(config.dataDir, [unreadable]);
    throw new Error(`the data dir ${config.dataDir} (KEYWARD_DATA_DIR) cannot be used: ${(err as Error).message}`);
  }
  // The store in memory first: the record check reads it, and it would fault a page at a time.
  warmStore(log);
  if (checked) refuseDamage(config.dataDir, checkRecords(config.startCheckMs / 2).problems);
  // The analytics worker before the first request, so no event waits for it.
  const analytics = config.analytics === undefined ? undefined : await startAnalytics({ ...config.analytics, dataDir: config.dataDir }, log);
  try {
    await serveWith(config, log, descriptorsLimit, analytics);
  } catch (err) {
    // A start that fails from here stops the analytics worker first: Node aborts the process
    // when process.exit tears down a thread in the middle of DuckDB's native calls.
    await analytics?.stop().catch(() => undefined);
    throw err;
  }
}

/** The rest of a start, once the store is open and the analytics worker runs: serve, and stop on a signal. */
async function serveWith(config: Config, log: Logger, descriptorsLimit: number, analytics: Awaited<ReturnType<typeof startAnalytics>> | undefined): Promise<void> {
  const thread = threadServices(config, log, true, analytics?.client);
  const { services, cluster } = thread;
  try {
    await startCluster(cluster);
    // What a crash left of this node's leases goes back (exactly: grants and returns are totals).
    // With PostgreSQL away (a node started from its replica) they stay this node's, spent on as before.
    const leases = await cluster?.credits.giveBackAll().catch((err: unknown) => {
      if (!(err instanceof PostgresUnavailable)) throw err;
      return 0;
    });
    if (leases !== undefined && leases > 0) log.info('gave back the leases of credits this node held when it stopped', { keys: leases });
  } catch (err) {
    await cluster?.pg.close();
    throw new Error(`cluster mode (KEYWARD_POSTGRES_URL) could not start: ${(err as Error).message}`);
  }
  // In cluster mode the first node bootstraps the cluster, once (PostgreSQL refuses the
  // others' bootstraps as stale, and they find it done).
  // A replica bootstrapped already only reads (bootstrap writes nothing then): no need of PostgreSQL for it.
  const boot = cluster === undefined || isBootstrapped() ? direct.transact(() => bootstrap(config.rootKey, Date.now())) : await services.writer.transact(() => bootstrap(config.rootKey, Date.now()));
  if (boot === 'no_root_key') {
    log.warn('the store has no root key, so every procedure answers 401: create one with keyward root-keys create --workspace <id> --permission <p>');
  } else if (boot === 'configured_key_unknown') {
    log.warn('KEYWARD_ROOT_KEY is not a root key of this store: it is used only to bootstrap an empty data dir');
  } else if (boot !== 'ok') {
    log.info('bootstrapped an empty data dir', { workspaceId: boot.workspaceId, rootKeyId: boot.rootKeyId });
    if (boot.generatedKey !== undefined) {
      // Printed once, on stdout only: the store keeps just its hash.
      process.stdout.write(`keyward: root key for workspace ${boot.workspaceId} (shown once, store it now): ${boot.generatedKey}\n`);
    }
  }
  const metrics = newMetrics(config.threads);
  const server = await serveThread(config, metrics, thread, descriptorsLimit);
  const stopHeartbeat = cluster === undefined ? () => undefined : startHeartbeat(cluster, config.nodeId, config.clusterLogKeep, config.clusterLeaseTtlMs);
  const stopSweeper = startWindowSweeper(SWEEP_INTERVAL_MS, services.gate, log);
  for (const apiId of deletedApiIds()) void services.jobs.purgeApi(apiId);
  for (const unlinking of pendingUnlinkings()) void services.jobs.unlink(unlinking);
  const workers: Worker[] = [];
  for (let i = 1; i < config.threads; i++) {
    const toAnalytics = analytics?.portFor();
    const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { config, metrics: metrics.buffer, thread: i, descriptorsLimit, ...(toAnalytics === undefined ? {} : { analytics: toAnalytics }) } satisfies WorkerInit, transferList: toAnalytics === undefined ? [] : [toAnalytics.port] });
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    });
    workers.push(worker);
  }

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('draining', { signal });
    // Analytics queries run up to their timeout (30 s): interrupted, they answer before the drain ends.
    analytics?.quiesce();
    await Promise.all([
      server.drain(DRAIN_TIMEOUT_MS),
      ...workers.map((w) => new Promise<void>((resolve) => {
        w.once('message', () => resolve());
        w.once('exit', () => resolve());
        w.postMessage('drain');
      })),
    ]);
    stopSweeper();
    stopHeartbeat();
    await services.jobs.drain(DRAIN_TIMEOUT_MS);
    if (cluster !== undefined) {
      await cluster.windows?.stop();
      await cluster.credits.stop();
      // Every lease this node holds goes back (a node that cannot reach PostgreSQL now gives
      // them back when it starts again).
      await cluster.credits.giveBackAll().catch((err: unknown) => log.warn('could not give back the leases of credits; they go back when this node starts again', { error: (err as Error).message }));
    }
    await cluster?.replica.stop();
    await cluster?.pg.close();
    services.gate.closeBatch();
    // Every event of an answered call is written before the process ends.
    await analytics?.stop().catch((err: unknown) => log.warn('analytics: the last events could not be written', { error: (err as Error).message }));
    native.close();
    log.info('stopped');
    // Serving workers are not terminated: a worker's idle keep-alive connections are open
    // uWS handles, and Node aborts the process (an assertion) when it tears down a worker
    // loop with open handles, at terminate() and at process.exit alike. Drained, they hold
    // no open batch and answer nothing but 503 shutting_down; the store is committed,
    // synced and closed, so the process ends here without Node's teardown.
    if (workers.length > 0) native.exitProcess(0);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // Printed once the signal handlers are in place: from here a SIGTERM drains cleanly.
  process.stdout.write(`keyward listening on ${hostUrl(config.host, server.port)} (threads=${config.threads}, durability=${config.durability}, data=${config.dataDir})\n`);
}

if (!isMainThread) {
  void runWorker(workerData as WorkerInit);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    await runServer(loadConfig());
  } catch (err) {
    process.stderr.write(`keyward: ${err instanceof ConfigError ? 'configuration error: ' : ''}${(err as Error).message}\n`);
    process.exit(1);
  }
}
