// keyward CLI: `serve`, and workspace / root-key management on the same store as the server
// (LMDB is multi-process safe, so these work while the server runs).
import { ConfigError, flagsToEnv, loadConfig, type Config } from './config.js';
import { native } from './engine/native.js';
import { HotCalls } from './engine/hotCalls.js';
import { isValidGrant } from './domain/grants.js';
import { isMigrationAlgorithm, MIGRATION_ALGORITHMS } from './domain/legacyHash.js';
import { createMigration, listMigrations } from './store/migrations.js';
import { createRootKey, createWorkspace, getWorkspace, listRootKeys, listWorkspaces, revokeRootKey } from './store/rootKeys.js';
import { runServer } from './main.js';
import { direct, settled, type AsyncWriter } from './store/db.js';
import { prepareCluster, threadCluster } from './cluster/node.js';
import { Postgres } from './cluster/postgres.js';
import { migrate } from './cluster/schema.js';
import { seedCluster } from './cluster/seed.js';
import { createLogger } from './log.js';
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { BackupError, interruptedRestoreProblem, isBackup, refuseBackup, restoreBackup, takeBackup, verifyManifest, withBackupCopy } from './store/backup.js';
import { checkPages, checkRecords, hasStore, lostStoreProblem, unreadableStoreProblem, type RecordsReport } from './store/integrity.js';
import { exportSnapshot } from './store/export.js';
import { importFile, readHeader } from './store/import.js';
import { fileURLToPath } from 'node:url';

const USAGE = `usage: keyward <command> [--data-dir DIR]
  serve [--host H] [--port P] [--durability process|disk] [--threads N] [--log-level L]
  workspaces create                      prints {"workspaceId"}
  workspaces list
  root-keys create --workspace <id> --permission <p> [--permission <p>]...
                                         prints {"workspaceId","rootKeyId","key"}
  root-keys list [--workspace <id>]
  root-keys revoke <rootKeyId>
  migrations create --workspace <id> --algorithm <name>
                                         prints {"migrationId","workspaceId","algorithm"}; name:
                                         ${MIGRATION_ALGORITHMS.join(' | ')}
  migrations list [--workspace <id>]
  backup <dir>                           a consistent, compacted copy of the store, taken as it serves; prints its manifest
  restore <backup> [--force]             the backup as the store of --data-dir
                                         (a non-empty one only with --force; stop the server first)
  check                                  walks the whole store, pages and records, and a backup's manifest; exits 1 on damage
  export [--workspace <id>]              every record (or one workspace's) of one consistent state
                                         as JSON lines on stdout; its counts on stderr
  import <file>                          loads an export (records there already are skipped);
                                         prints {"imported","skipped"}
  cluster seed --data-dir DIR            loads a single node's store into an empty cluster
                                         (KEYWARD_POSTGRES_URL); prints {"records"}
  bench [--full] [--out DIR]             the benchmark suite (same as npm run bench)
  help                                   this text (also --help, -h)`;

class UsageError extends Error {}

function takeOption(args: string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length; ) {
    const arg = args[i] ?? '';
    if (arg === name) {
      const value = args[i + 1];
      if (value === undefined) throw new UsageError(`${name} needs a value`);
      values.push(value);
      args.splice(i, 2);
    } else if (arg.startsWith(`${name}=`)) {
      values.push(arg.slice(name.length + 1));
      args.splice(i, 1);
    } else i++;
  }
  return values;
}

/** What is left of a command's arguments once its options are taken: nothing, or a usage error. */
function noMoreArguments(args: readonly string[]): void {
  if (args.length > 0) throw new UsageError(`unexpected argument '${args[0] ?? ''}'`);
}

/** The configuration flags (flagsToEnv); one missing its value is a usage error, as any other. */
function parseFlags(argv: readonly string[]): ReturnType<typeof flagsToEnv> {
  try {
    return flagsToEnv(argv);
  } catch (err) {
    throw err instanceof ConfigError ? new UsageError(err.message) : err;
  }
}

/** Takes a flag without a value (`--force`); whether it was there. */
function takeFlag(args: string[], name: string): boolean {
  const at = args.indexOf(name);
  if (at >= 0) args.splice(at, 1);
  return at >= 0;
}

/** Commands that read a store refuse a data dir without one (rather than create an empty store). */
function requireStore(dataDir: string): void {
  if (hasStore(dataDir)) return;
  const lost = interruptedRestoreProblem(dataDir) ?? lostStoreProblem(dataDir);
  throw new Error(`there is no store in ${resolve(dataDir)} (KEYWARD_DATA_DIR / --data-dir)${lost === undefined ? '' : `: ${lost}`}`);
}

/** A `--workspace` given that names no workspace is a failure (exit 1), not an empty answer. */
function requireWorkspace(workspace: string | undefined): void {
  if (workspace !== undefined && getWorkspace(workspace) === undefined) throw new Error(`workspace ${workspace} does not exist`);
}

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

/** Writes to stdout; resolves once stdout took it (a slow reader holds the writer back). */
function writeStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(text, (err) => (err ? reject(err) : resolve())));
}

/**
 * Runs `fn` with the store of KEYWARD_DATA_DIR open and a writer: the store's own, or in
 * cluster mode (KEYWARD_POSTGRES_URL) the cluster's — the store is then a replica, brought up
 * to date before `fn` reads it, and writes go through PostgreSQL.
 */
async function withStore<T>(fn: (writer: AsyncWriter) => T | Promise<T>): Promise<T> {
  const config = loadConfig();
  refuseBackup(config.dataDir);
  native.open(config.dataDir, config.durability === 'disk', 0, config.initialMapBytes, config.writeMap);
  const cluster = config.postgresUrl === undefined ? undefined : threadCluster(config, createLogger('warn'), undefined, direct, new HotCalls());
  try {
    if (cluster !== undefined) {
      await prepareCluster(cluster);
      await cluster.replica.once();
    }
    const result = await fn(cluster?.writer ?? settled(direct));
    native.sync();
    return result;
  } finally {
    await cluster?.replica.stop();
    await cluster?.pg.close();
    native.close();
  }
}

/** `keyward bench ...`: the suite of `npm run bench` (bench packages first), same options. */
function runBench(args: string[]): Promise<number> {
  const here = dirname(fileURLToPath(import.meta.url));
  const steps: string[][] = [[join(here, '..', '..', 'scripts', 'setup.mjs'), '--quiet', '--bench'], [join(here, '..', 'bench', 'suite.js'), ...args]];
  return steps.reduce<Promise<number>>(
    (prev, stepArgs) =>
      prev.then((code) =>
        code !== 0
          ? code
          : new Promise<number>((resolve, reject) => {
              const child = spawn(process.execPath, stepArgs, { stdio: 'inherit' });
              child.once('error', reject);
              child.once('exit', (c, signal) => resolve(c ?? (signal === null ? 1 : 128)));
            }),
      ),
    Promise.resolve(0),
  );
}

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (argv[0] === 'bench') return runBench(argv.slice(1));
  const { env, rest } = parseFlags(argv);
  Object.assign(process.env, env);
  const [group, action, ...args] = rest;
  if (group === 'serve' || group === undefined) {
    if (action !== undefined) throw new UsageError(`unexpected argument '${action}' for serve`);
    await runServer(loadConfig());
    return -1; // keeps running
  }
  if (group === 'workspaces' && action === 'create') {
    noMoreArguments(args);
    await withStore(async (w) => print({ workspaceId: (await w.transact(() => createWorkspace(Date.now()))).id }));
    return 0;
  }
  if (group === 'workspaces' && action === 'list') {
    noMoreArguments(args);
    await withStore(() => print(listWorkspaces().map((w) => ({ workspaceId: w.id, createdAt: w.createdAtMs }))));
    return 0;
  }
  if (group === 'root-keys' && action === 'create') {
    const [workspace] = takeOption(args, '--workspace');
    const permissions = takeOption(args, '--permission');
    if (workspace === undefined) throw new UsageError('root-keys create needs --workspace <id>');
    if (permissions.length === 0) throw new UsageError('root-keys create needs at least one --permission <p> (e.g. apis.*.verify_key, or * for everything)');
    const bad = permissions.find((p) => !isValidGrant(p));
    if (bad !== undefined) throw new UsageError(`'${bad}' is not a permission: use resource.id.action (segments may be *), or * alone`);
    noMoreArguments(args);
    await withStore(async (w) => {
      const { record, key } = await w.transact(() => createRootKey(workspace, permissions, Date.now()));
      print({ workspaceId: record.workspaceId, rootKeyId: record.id, key });
    });
    return 0;
  }
  if (group === 'root-keys' && action === 'list') {
    const [workspace] = takeOption(args, '--workspace');
    noMoreArguments(args);
    await withStore(() => {
      requireWorkspace(workspace);
      print(listRootKeys(workspace).map((r) => ({ rootKeyId: r.id, workspaceId: r.workspaceId, start: r.start, permissions: r.permissions, createdAt: r.createdAtMs })));
    });
    return 0;
  }
  if (group === 'root-keys' && action === 'revoke') {
    const [id, ...more] = args;
    if (id === undefined || id.startsWith('-')) throw new UsageError('root-keys revoke needs <rootKeyId>');
    noMoreArguments(more);
    const revoked = await withStore((w) => w.transact(() => revokeRootKey(id)));
    if (!revoked) {
      process.stderr.write(`keyward: root key ${id} not found\n`);
      return 1;
    }
    print({ rootKeyId: id, revoked: true });
    return 0;
  }
  if (group === 'migrations' && action === 'create') {
    const [workspace] = takeOption(args, '--workspace');
    const [algorithm] = takeOption(args, '--algorithm');
    if (workspace === undefined) throw new UsageError('migrations create needs --workspace <id>');
    if (algorithm === undefined || !isMigrationAlgorithm(algorithm)) {
      const given = algorithm === undefined ? '' : ` (${JSON.stringify(algorithm)} is none of them)`;
      throw new UsageError(`migrations create needs --algorithm <name>, one of ${MIGRATION_ALGORITHMS.join(', ')}${given}`);
    }
    noMoreArguments(args);
    await withStore(async (w) => {
      const record = await w.transact(() => {
        requireWorkspace(workspace);
        return createMigration(workspace, algorithm, Date.now());
      });
      print({ migrationId: record.id, workspaceId: record.workspaceId, algorithm: record.algorithm });
    });
    return 0;
  }
  if (group === 'migrations' && action === 'list') {
    const [workspace] = takeOption(args, '--workspace');
    noMoreArguments(args);
    await withStore(() => {
      requireWorkspace(workspace);
      print(listMigrations(workspace).map((m) => ({ migrationId: m.id, workspaceId: m.workspaceId, algorithm: m.algorithm, createdAt: m.createdAtMs })));
    });
    return 0;
  }
  if (group === 'backup') {
    const [target, ...more] = action === undefined ? [] : [action, ...args];
    if (target === undefined || target.startsWith('-')) throw new UsageError('backup needs <dir>, the directory to write the backup to');
    noMoreArguments(more);
    const config = loadConfig();
    requireStore(config.dataDir);
    refuseBackup(config.dataDir);
    native.open(config.dataDir, false, 0, config.initialMapBytes, config.writeMap);
    try {
      const cluster = config.postgresUrl !== undefined;
      const manifest = takeBackup(target, { dataDir: config.dataDir, cluster, ...(cluster ? { nodeId: config.nodeId } : {}) });
      print({ backup: resolve(target), ...manifest });
      if (cluster) process.stderr.write(`keyward: cluster mode: this is node ${config.nodeId}'s replica; the cluster's own state is in PostgreSQL (back it up with pg_dump)\n`);
    } finally {
      native.close();
    }
    return 0;
  }
  if (group === 'restore') {
    const operands = action === undefined ? [] : [action, ...args];
    const force = takeFlag(operands, '--force');
    const [backup, ...more] = operands;
    if (backup === undefined || backup.startsWith('-')) throw new UsageError('restore needs <backup>, a directory keyward backup wrote');
    noMoreArguments(more);
    const config = loadConfig();
    const manifest = restoreBackup(backup, config.dataDir, force);
    openToCheck(config);
    try {
      const records = checkRecords(0);
      if (records.problems.length > 0) throw new Error(`the restored store does not check out: ${records.problems.join('; ')}`);
      print({ restored: resolve(config.dataDir), from: resolve(backup), createdAt: manifest.createdAt, lastTxnId: manifest.lastTxnId, records: records.records });
    } finally {
      native.close();
    }
    return 0;
  }
  if (group === 'check') {
    if (action !== undefined) throw new UsageError(`unexpected argument '${action}' for check`);
    const config = loadConfig();
    requireStore(config.dataDir);
    const started = performance.now();
    // A backup is checked as restore checks it (its manifest; its pages below), and its records on a copy: opening a store writes to it.
    const backup = isBackup(config.dataDir);
    const manifestProblems: string[] = [];
    if (backup) {
      try {
        verifyManifest(config.dataDir);
      } catch (err) {
        if (!(err instanceof BackupError)) throw err;
        manifestProblems.push(err.message);
      }
    }
    const pages = checkPages(config.dataDir, 0);
    let records: RecordsReport | undefined;
    let unreadable: string | undefined;
    const checkOpened = (dataDir: string): void => {
      try {
        openToCheck({ ...config, dataDir });
      } catch (err) {
        unreadable = unreadableStoreProblem(err);
        if (unreadable === undefined) throw err;
      }
      if (unreadable === undefined) {
        try {
          records = checkRecords(0);
        } finally {
          native.close();
        }
      }
    };
    if (pages.problems.length === 0) {
      if (backup) withBackupCopy(config.dataDir, checkOpened);
      else checkOpened(config.dataDir);
    }
    const interrupted = interruptedRestoreProblem(config.dataDir);
    const problems = [...(interrupted === undefined ? [] : [interrupted]), ...manifestProblems, ...pages.problems, ...(unreadable === undefined ? [] : [unreadable]), ...(records?.problems ?? [])];
    print({ dataDir: resolve(config.dataDir), ok: problems.length === 0, txnId: pages.txnId, usedBytes: pages.usedBytes, pages: pages.pages, tables: Object.fromEntries(pages.tables), records: records?.records ?? null, seconds: Number(((performance.now() - started) / 1000).toFixed(3)), problems });
    if (problems.length > 0) process.stderr.write(`keyward: ${interrupted ?? `the store in ${resolve(config.dataDir)} is damaged: restore the last backup (keyward restore <backup> --data-dir ${config.dataDir} --force)`}\n`);
    return problems.length === 0 ? 0 : 1;
  }
  if (group === 'export') {
    const operands = action === undefined ? [] : [action, ...args];
    const [workspace] = takeOption(operands, '--workspace');
    noMoreArguments(operands);
    const config = loadConfig();
    // A cluster node's data dir may be empty: the replica is brought up to date first.
    if (config.postgresUrl === undefined) requireStore(config.dataDir);
    const started = performance.now();
    const counts = await exportSnapshot(config.dataDir, (dir) => withStore(() => void native.backup(dir)), writeStdout, workspace);
    process.stderr.write(`${JSON.stringify({ exported: counts, seconds: Number(((performance.now() - started) / 1000).toFixed(3)) })}\n`);
    return 0;
  }
  if (group === 'import') {
    const [file, ...more] = action === undefined ? [] : [action, ...args];
    if (file === undefined || file.startsWith('-')) throw new UsageError('import needs <file>, a file keyward export wrote');
    noMoreArguments(more);
    await readHeader(file);
    print(await withStore((w) => importFile(file, w, Date.now())));
    return 0;
  }
  if (group === 'cluster' && action === 'seed') {
    noMoreArguments(args);
    const config = loadConfig();
    if (config.postgresUrl === undefined) throw new Error('cluster seed needs KEYWARD_POSTGRES_URL (the cluster to load the store into)');
    refuseBackup(config.dataDir);
    native.open(config.dataDir, false, 0, config.initialMapBytes, config.writeMap);
    const pg = new Postgres(config.postgresUrl, createLogger('warn'));
    try {
      await migrate(pg);
      print({ records: await seedCluster(pg, Date.now()) });
    } finally {
      await pg.close();
      native.close();
    }
    return 0;
  }
  throw new UsageError(`unknown command '${[group, action].filter(Boolean).join(' ')}'`);
}

/**
 * Opens the store for a full record check, its pages read into memory first: opening leaves
 * them to be read back in the background (native/src/store/page_cache.rs), and a walk that
 * outruns that faults one 4 KiB disk read at a time (20 times slower on 1,000,000 keys).
 */
function openToCheck(config: Config): void {
  native.open(config.dataDir, false, 0, config.initialMapBytes, config.writeMap);
  native.warm(FULL_WARM_MS);
}
/** As long as reading the whole store takes. */
const FULL_WARM_MS = 3_600_000;

export async function runCli(argv: string[]): Promise<void> {
  try {
    const code = await main(argv);
    if (code >= 0) process.exit(code);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`keyward: ${err.message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`keyward: ${err instanceof ConfigError ? 'configuration error: ' : ''}${(err as Error).message}\n`);
    process.exit(1);
  }
}

// Run directly (`node dist/src/cli.js …`), not only through bin/keyward.mjs, so that form does
// not exit 0 having done nothing.
if (process.argv[1] === fileURLToPath(import.meta.url)) await runCli(process.argv.slice(2));
