#!/usr/bin/env node
// Builds the Rust native module (cargo build --release, via ./cargo.mjs so the Debian
// registry is used where it exists) and installs target/release/libkeyward_native.so as
// native/keyward.node, the file the TypeScript engine loads.
import { copyFileSync, existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, runCargo } from './cargo.mjs';

export const ARTIFACT = join(ROOT, 'target', 'release', 'libkeyward_native.so');
export const ADDON = join(ROOT, 'native', 'keyward.node');

export async function buildNative({ quiet = false } = {}) {
  const status = runCargo(['build', '--release'], { quiet });
  if (status !== 0) {
    throw new Error(`native build failed: cargo build --release exited with status ${status}`);
  }
  if (!existsSync(ARTIFACT)) {
    throw new Error(`native build produced no ${ARTIFACT} (is native/Cargo.toml's crate-type cdylib?)`);
  }
  // Copy then rename, so a process that has the old addon loaded keeps a valid mapping.
  const tmp = `${ADDON}.tmp-${process.pid}`;
  copyFileSync(ARTIFACT, tmp);
  renameSync(tmp, ADDON);
  if (!quiet) console.log(`native: installed ${ADDON}`);
  return ADDON;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildNative({ quiet: process.argv.includes('--quiet') }).catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
