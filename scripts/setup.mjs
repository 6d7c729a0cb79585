#!/usr/bin/env node
// Makes a fresh clone runnable: Debian packages (as root), npm dependencies, the native
// module (cargo, Debian crate registry) and the TypeScript build — each only when missing
// or out of date. `npm start`, `npm test` and bin/keyward.mjs call it first.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from './cargo.mjs';

// Build needs: LMDB and SHA-2 crates (and their deps) from Debian, liblmdb to link, pkg-config
// to find it, cargo to build. wrk (peaks) and redis-server (a peer) are for bench/ only.
export const DEBIAN_PACKAGES = ['librust-lmdb-dev', 'librust-sha2-dev', 'liblmdb-dev', 'pkg-config', 'cargo'];
export const BENCH_PACKAGES = ['wrk', 'redis-server'];
// The cluster tests start a throwaway PostgreSQL of their own (test/helpers/postgres.ts).
export const TEST_PACKAGES = ['postgresql', 'redis-server'];

function say(quiet, msg) {
  if (!quiet) process.stderr.write(`setup: ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { cwd: ROOT, stdio: opts.quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit', env: { ...process.env, ...opts.env } });
  if (res.error) throw res.error;
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with exit code ${res.status}`);
}

function missingDebianPackages(wanted) {
  if (!existsSync('/usr/bin/dpkg-query')) return [];
  return wanted.filter((p) => {
    if (p === 'cargo' && spawnSync('cargo', ['--version']).status === 0) return false; // e.g. from rustup
    const res = spawnSync('dpkg-query', ['-W', '-f=${Status}', p], { encoding: 'utf8' });
    return !(res.stdout ?? '').includes('install ok installed');
  });
}

function ensureDebianPackages(quiet, wanted) {
  const missing = missingDebianPackages(wanted);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`missing Debian packages: ${missing.join(' ')}. Install them with: sudo apt-get install -y ${missing.join(' ')}`);
  }
  say(quiet, `installing Debian packages: ${missing.join(' ')}`);
  run('apt-get', ['update', '-q'], { quiet: true });
  run('apt-get', ['install', '-y', '-q', ...missing], { quiet, env: { DEBIAN_FRONTEND: 'noninteractive' } });
}

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function mtime(path) {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

// node_modules is current when it was installed from exactly this package.json and lock.
function dependencyStamp() {
  const hash = createHash('sha256');
  for (const f of ['package.json', 'package-lock.json']) if (existsSync(join(ROOT, f))) hash.update(readFileSync(join(ROOT, f)));
  return hash.digest('hex');
}

function ensureNpm(quiet) {
  const stampFile = join(ROOT, 'node_modules', '.keyward-deps');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === dependencyStamp() && existsSync(join(ROOT, 'node_modules', 'uWebSockets.js'))) return;
  say(quiet, 'installing npm dependencies');
  // `npm install` rather than `npm ci`: npm 11 writes lock files without other platforms'
  // optional packages, which `npm ci` then rejects; `install` honours the lock and completes it.
  run('npm', ['install', '--no-audit', '--no-fund', '--include=dev'], { quiet });
  writeFileSync(stampFile, dependencyStamp());
}

async function ensureNative(quiet, force) {
  const addon = join(ROOT, 'native', 'keyward.node');
  const sources = Math.max(newestMtime(join(ROOT, 'native', 'src')), mtime(join(ROOT, 'native', 'Cargo.toml')), mtime(join(ROOT, 'Cargo.toml')), mtime(join(ROOT, 'Cargo.lock')));
  if (!force && mtime(addon) >= sources) return;
  say(quiet, 'building the native module (cargo)');
  const { buildNative } = await import('./build-native.mjs');
  await buildNative({ quiet });
}

function ensureTypeScript(quiet, force) {
  const out = join(ROOT, 'dist', 'src', 'main.js');
  const sources = Math.max(newestMtime(join(ROOT, 'src')), newestMtime(join(ROOT, 'bench')), mtime(join(ROOT, 'tsconfig.json')));
  if (!force && mtime(out) >= sources) return;
  say(quiet, 'compiling TypeScript');
  run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.json')], { quiet });
}

const LOAD_GENERATOR_SRC = join(ROOT, 'bench', 'native', 'openloop.c');

/** The command (program, arguments) compiling the open-loop load generator into `out`; its test builds it the same way. */
export function loadGeneratorBuild(out) {
  return ['cc', ['-O2', '-Wall', '-o', out, LOAD_GENERATOR_SRC]];
}

// The bench's open-loop load generator (C), built with the compiler cargo already links with.
function ensureLoadGenerator(quiet, force) {
  const out = join(ROOT, 'dist', 'bench', 'openloop');
  if (!force && mtime(out) >= mtime(LOAD_GENERATOR_SRC)) return;
  say(quiet, 'compiling the open-loop load generator (cc)');
  mkdirSync(dirname(out), { recursive: true });
  run(...loadGeneratorBuild(out), { quiet });
}

export async function ensureReady({ quiet = false, forceBuild = false, bench = false, test = false } = {}) {
  ensureDebianPackages(quiet, bench ? [...DEBIAN_PACKAGES, ...BENCH_PACKAGES] : DEBIAN_PACKAGES);
  if (test) {
    // Not root: the cluster tests say what is missing when they start.
    if (process.getuid?.() === 0) ensureDebianPackages(quiet, TEST_PACKAGES);
    else if (missingDebianPackages(TEST_PACKAGES).length > 0) say(false, `the cluster tests need Debian packages: sudo apt-get install -y ${missingDebianPackages(TEST_PACKAGES).join(' ')}`);
  }
  ensureNpm(quiet);
  await ensureNative(quiet, forceBuild);
  ensureTypeScript(quiet, forceBuild);
  if (bench) ensureLoadGenerator(quiet, forceBuild);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    await ensureReady({ quiet: process.argv.includes('--quiet'), forceBuild: process.argv.includes('--force-build'), bench: process.argv.includes('--bench'), test: process.argv.includes('--test') });
  } catch (err) {
    process.stderr.write(`setup: ${err.message}\n`);
    process.exit(1);
  }
}
