// The data file is kept in the page cache as single 4 KiB pages (native/src/store/page_cache.rs,
// small_pages): the kernel otherwise caches it in large folios (readahead builds them; ext4
// does since Linux 6.16), and the background flush writes a dirtied folio whole, so every
// changed 4 KiB page cost up to 2 MiB of writes. The check reads which physical pages back
// the store's map (/proc/self/pagemap, /proc/kpageflags): that needs root, and on a kernel
// that does not build large folios for the filesystem it holds either way.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const NATIVE_PATH = fileURLToPath(new URL('../../native/keyward.node', import.meta.url));
const T0 = Date.UTC(2026, 0, 15, 12);

function canReadPageFlags(): boolean {
  try {
    accessSync('/proc/kpageflags', constants.R_OK);
    return process.getuid?.() === 0;
  } catch {
    return false;
  }
}

/** fincore (util-linux) tells what of a file is cached; tmpfs keeps every page cached. */
function canWatchTheCache(): boolean {
  const fs = spawnSync('stat', ['-f', '-c', '%T', tmpdir()], { encoding: 'utf8' });
  return spawnSync('fincore', ['--version']).status === 0 && fs.status === 0 && fs.stdout.trim() !== 'tmpfs';
}

/** Runs `body` in a child process with `native` opened on `dir`, with or without the writable map. */
function inChild(dir: string, writeMap: boolean, body: string): string {
  const child = spawnSync(process.execPath, ['-e', `
    const fs = require('node:fs');
    const native = require(${JSON.stringify(NATIVE_PATH)});
    native.open(${JSON.stringify(dir)}, false, 0, 0, ${writeMap});
    ${body}
    native.close();
  `], { encoding: 'utf8' });
  expect(child.stderr).toBe('');
  expect(child.status).toBe(0);
  return child.stdout;
}

// In the child: of the pages of data.mdb mapped in this process, how many are in large
// folios (a compound page's head or tail, KPF_COMPOUND_HEAD = bit 15, KPF_COMPOUND_TAIL = 16).
const COUNT_LARGE = `
  const line = fs.readFileSync('/proc/self/maps', 'utf8').split('\\n').find((l) => l.endsWith('/data.mdb'));
  const [start, end] = line.split(' ')[0].split('-').map((h) => BigInt('0x' + h));
  const pages = Number((end - start) / 4096n);
  const entries = Buffer.alloc(pages * 8);
  const pagemap = fs.openSync('/proc/self/pagemap', 'r');
  fs.readSync(pagemap, entries, 0, entries.length, Number(start / 4096n) * 8);
  const flags = fs.openSync('/proc/kpageflags', 'r');
  const one = Buffer.alloc(8);
  let mapped = 0, large = 0;
  for (let i = 0; i < pages; i++) {
    const e = entries.readBigUInt64LE(i * 8);
    if ((e >> 63n) === 0n) continue;
    mapped++;
    fs.readSync(flags, one, 0, 8, Number(e & ((1n << 55n) - 1n)) * 8);
    if ((one.readBigUInt64LE(0) & ((1n << 15n) | (1n << 16n))) !== 0n) large++;
  }
  process.stdout.write(JSON.stringify({ mapped, large }));
`;

/** What COUNT_LARGE reported: enough of the map was mapped to tell, and none of it in large folios. */
function expectSinglePages(out: string): void {
  const { mapped, large } = JSON.parse(out) as { mapped: number; large: number };
  expect(mapped).toBeGreaterThan(100);
  expect(large).toBe(0);
}

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the page cache of the data file', () => {
  it.skipIf(!canReadPageFlags())('holds single pages, also after another process read the file in large folios', () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-page-cache-'));
    // Written through pwrite (as the CLI or a \`disk\`-mode server writes): the kernel caches
    // runs of written pages in large folios where it can, and a plain read of the file
    // (readahead) does too.
    inChild(dir, false, `native.transaction(() => { for (let i = 0; i < 20000; i++) native.creditsSet('key_' + i, 1000, -1, 0, ${T0}); });`);
    readFileSync(join(dir, 'data.mdb'));
    // The server opens the store with the writable map (reading the counter log into its
    // index), spends credits in 200 commits over random keys, and reports what backs its map.
    const out = inChild(dir, true, `
      for (let i = 0; i < 200; i++) native.transaction(() => native.creditsSet('key_' + ((i * 7919) % 20000), 999, -1, 0, ${T0}));
      ${COUNT_LARGE}
    `);
    expectSinglePages(out);
  });

  it.skipIf(!canReadPageFlags())('holds single pages where the data grew through pwrite (no writable map)', () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-page-cache-'));
    // The default commit path: LMDB writes the pages the data grows into with pwrite, in runs
    // of new pages, which the kernel would cache in large folios; the store keeps the pages
    // past the data cached as single pages ahead of time. Then every record of the counter
    // log is read through the map, so that its pages are mapped and can be checked.
    const out = inChild(dir, false, `
      for (let c = 0; c < 100; c++) native.transaction(() => { for (let i = 0; i < 200; i++) native.creditsSet('key_' + (c * 200 + i), 1000, -1, 0, ${T0}); });
      if (native.range('counter_log', Buffer.alloc(0), null, 100000).length !== 40000) throw new Error('not every record was read');
      ${COUNT_LARGE}
    `);
    expectSinglePages(out);
  });

  // native.warm (the server calls it before it listens): opening starts reading the pages
  // in use back with POSIX_FADV_WILLNEED and returns; warm waits until they are in. The
  // child drops the file from the cache after the open (dd iflag=nocache, once written
  // back), so without warm almost nothing of it would be cached when fincore looks.
  it.skipIf(!canWatchTheCache())('warm has every page in use in the cache, as single pages, before the server takes requests', () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-page-cache-'));
    // Records the open does not read (it reads the counter log into its index, and a page a
    // process has mapped cannot be dropped from the cache).
    inChild(dir, false, `native.transaction(() => { for (let i = 0; i < 20000; i++) native.put('indexes', 'idx_' + i, Buffer.alloc(100, i % 251)); });`);
    const data = join(dir, 'data.mdb');
    const out = inChild(dir, false, `
      const { execFileSync } = require('node:child_process');
      const cached = () => Number(execFileSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', ${JSON.stringify(data)}], { encoding: 'utf8' }).trim());
      execFileSync('sync', [${JSON.stringify(data)}]);
      execFileSync('dd', ['if=' + ${JSON.stringify(data)}, 'iflag=nocache', 'count=0'], { stdio: 'ignore' });
      const dropped = cached();
      const used = native.stats().usedBytes;
      const warmed = native.warm(10000);
      const after = cached();
      const none = native.warm(0);
      if (native.range('indexes', Buffer.alloc(0), null, 100000).length !== 40000) throw new Error('not every record was read');
      const pages = ${canReadPageFlags()} ? (() => { ${COUNT_LARGE.replace('process.stdout.write(JSON.stringify({ mapped, large }));', 'return { mapped, large };')} })() : undefined;
      process.stdout.write(JSON.stringify({ dropped, used, warmed, after, none, pages }));
    `);
    const r = JSON.parse(out) as { dropped: number; used: number; warmed: { usedBytes: number; readBytes: number }; after: number; none: { usedBytes: number; readBytes: number }; pages?: { mapped: number; large: number } };
    expect(r.used).toBeGreaterThan(1 << 20);
    expect(r.dropped).toBeLessThan(r.used / 4);
    expect(r.warmed).toEqual({ usedBytes: r.used, readBytes: r.used });
    expect(r.after).toBeGreaterThanOrEqual(r.used);
    // A budget of nothing reads nothing, and says so.
    expect(r.none).toEqual({ usedBytes: r.used, readBytes: 0 });
    expect(statSync(data).size).toBeGreaterThanOrEqual(r.used);
    if (r.pages !== undefined) expectSinglePages(JSON.stringify(r.pages));
  });
});
