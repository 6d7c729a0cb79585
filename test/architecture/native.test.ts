// The native module's shape (native/src): small files, every `unsafe` in the FFI module, and
// no circle among its modules (a module imports through `crate::<module>`).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server.js';

const SRC = join(ROOT, 'native', 'src');
/** The most lines a Rust file (its tests included) may have. */
const MAX_LINES = 700;

function rustFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return rustFiles(path);
    return name.endsWith('.rs') ? [path] : [];
  });
}

const files = rustFiles(SRC).map((path) => ({ path: relative(SRC, path), text: readFileSync(path, 'utf8') }));

/** The crate's top-level module a file belongs to (`store/txn.rs` → store); lib.rs is the crate root. */
const moduleOf = (path: string): string => path.split('/')[0]?.replace(/\.rs$/, '') ?? path;

/** A circle in `graph`, as the modules along it, or undefined. */
function findCircle(graph: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (m: string): string[] | undefined => {
    if (state.get(m) === 'done') return undefined;
    if (state.get(m) === 'open') return [...stack.slice(stack.indexOf(m)), m];
    state.set(m, 'open');
    stack.push(m);
    for (const next of graph.get(m) ?? []) {
      const circle = visit(next);
      if (circle !== undefined) return circle;
    }
    stack.pop();
    state.set(m, 'done');
    return undefined;
  };
  for (const m of graph.keys()) {
    const circle = visit(m);
    if (circle !== undefined) return circle;
  }
  return undefined;
}

describe('native/src', () => {
  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = files.map((f) => ({ path: f.path, lines: f.text.split('\n').length })).filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('has every unsafe block, fn and impl in ffi/', () => {
    const outside = files.filter((f) => !f.path.startsWith('ffi/')).flatMap((f) =>
      f.text.split('\n').flatMap((line, i) => (/\bunsafe\b/.test(line.replace(/\/\/.*$/, '')) ? [`${f.path}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(outside).toEqual([]);
  });

  it('has no circle among its modules', () => {
    const graph = new Map<string, Set<string>>();
    for (const f of files) {
      const from = moduleOf(f.path);
      if (from === 'lib') continue;
      const deps = graph.get(from) ?? new Set<string>();
      const code = f.text.replace(/\/\/.*$/gm, '');
      const named = [...code.matchAll(/\bcrate::([a-z_][a-z0-9_]*)/g)].map((m) => m[1] ?? '');
      const grouped = [...code.matchAll(/\bcrate::\{([^}]*)\}/g)].flatMap((m) => (m[1] ?? '').split(',').map((part) => part.trim().split('::')[0] ?? ''));
      for (const m of [...named, ...grouped]) if (m !== '' && m !== from) deps.add(m);
      graph.set(from, deps);
    }
    expect(graph.size).toBeGreaterThan(10);
    expect(findCircle(graph)).toBeUndefined();
  });

  it('the circle finder finds circles', () => {
    expect(findCircle(new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])]]))).toEqual(['a', 'b', 'c', 'a']);
    expect(findCircle(new Map([['a', new Set(['b'])], ['b', new Set<string>()]]))).toBeUndefined();
  });
});
