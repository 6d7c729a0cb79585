#!/usr/bin/env node
// The `keyward` command. Builds what is missing (native module, TypeScript) on first use.
import { ensureReady } from '../scripts/setup.mjs';

await ensureReady({ quiet: true });
const { runCli } = await import('../dist/src/cli.js');
await runCli(process.argv.slice(2));
