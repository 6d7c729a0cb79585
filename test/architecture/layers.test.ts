// The import-direction check (scripts/dependency-rules.cjs, run by `npm test` as test:deps)
// refuses what it is meant to refuse: run on small trees shaped like src/.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs the check on a tree of these files (path → source); its exit code and output. */
function check(files: Record<string, string>): { code: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'keyward-layers-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  const run = spawnSync(join(ROOT, 'node_modules', '.bin', 'depcruise'), ['src', '--config', join(ROOT, 'scripts', 'dependency-rules.cjs')], { cwd: dir, encoding: 'utf8' });
  return { code: run.status, output: run.stdout + run.stderr };
}

describe('dependency rules', () => {
  it('pass imports that point down the layers', () => {
    const r = check({
      'src/rpc/dispatch.ts': "import { find } from '../store/keys.js';\nexport const d = find;\n",
      'src/store/keys.ts': "import { native } from '../engine/native.js';\nexport const find = native;\n",
      'src/engine/native.ts': 'export const native = 1;\n',
    });
    expect(r.output).toContain('no dependency violations');
    expect(r.code).toBe(0);
  });

  it('refuse a backwards import (store → rpc), a type-only one too', () => {
    const r = check({
      'src/rpc/dispatch.ts': 'export class Dispatcher {}\n',
      'src/store/keys.ts': "import type { Dispatcher } from '../rpc/dispatch.js';\nexport type D = Dispatcher;\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('layers: store imports upward: src/store/keys.ts → src/rpc/dispatch.ts');
  });

  it('refuse the base importing a layer (errors → store)', () => {
    const r = check({
      'src/errors/errors.ts': "import { x } from '../store/db.js';\nexport const y = x;\n",
      'src/store/db.ts': 'export const x = 1;\n',
    });
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('layers: base imports upward');
  });

  it("refuse one namespace's procedure importing another's", () => {
    const r = check({
      'src/procedures/keys/createKey.ts': "import { getApi } from '../apis/getApi.js';\nexport const c = getApi;\n",
      'src/procedures/apis/getApi.ts': 'export const getApi = 1;\n',
    });
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('procedures: one namespace imports another');
  });

  it('refuse a file in no room, and a circle', () => {
    const stray = check({
      'src/rpc/dispatch.ts': "import { h } from '../misc/helper.js';\nexport const d = h;\n",
      'src/misc/helper.ts': "import { x } from '../store/db.js';\nexport const h = x;\n",
      'src/store/db.ts': 'export const x = 1;\n',
    });
    expect(stray.output).toContain('layers: unknown room: src/rpc/dispatch.ts → src/misc/helper.ts');
    expect(stray.output).toContain('layers: unknown room imports: src/misc/helper.ts → src/store/db.ts');
    const circle = check({
      'src/store/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'src/store/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    });
    expect(circle.code).not.toBe(0);
    expect(circle.output).toContain('no-circular');
  });
});
