#!/usr/bin/env node
// Runs cargo for the workspace. Where Debian's crate registry exists
// (/usr/share/cargo/registry, from the librust-*-dev packages) cargo is pointed at it as
// a directory source, so the build needs no crates.io; elsewhere cargo resolves as usual.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEBIAN_REGISTRY = '/usr/share/cargo/registry';
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export function cargoArgs(args) {
  if (!existsSync(DEBIAN_REGISTRY)) return args;
  return [
    '--config', 'source.crates-io.replace-with="debian-registry"',
    '--config', `source.debian-registry.directory="${DEBIAN_REGISTRY}"`,
    ...args,
  ];
}

export function runCargo(args, { quiet = false } = {}) {
  const res = spawnSync('cargo', cargoArgs(args), {
    cwd: ROOT,
    stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit',
  });
  if (res.error) throw res.error;
  return res.status ?? 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exit(runCargo(process.argv.slice(2)));
}
