// The README's error table and procedure table are checked against the code both ways, so
// the docs cannot drift from the catalogue and the route table.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, ERROR_NAMES } from '../../src/errors/catalogue.js';
import { ROUTES } from '../../src/rpc/routes.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

function tableRows(heading: string): string[][] {
  const start = readme.indexOf(heading);
  expect(start, heading).toBeGreaterThan(-1);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of readme.slice(start).split('\n').slice(1)) {
    if (line.startsWith('|')) {
      inTable = true;
      rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
    } else if (inTable) break;
  }
  return rows.slice(2); // header and separator
}

describe('README', () => {
  it('the error table lists exactly the catalogue, with its statuses, titles and type paths', () => {
    const rows = tableRows('### Error catalogue');
    const documented = rows.map((r) => (r[0] ?? '').replace(/`/g, ''));
    expect(new Set(documented)).toEqual(new Set(ERROR_NAMES));
    for (const r of rows) {
      const name = (r[0] ?? '').replace(/`/g, '') as keyof typeof CATALOGUE;
      const entry = CATALOGUE[name];
      expect(Number(r[1]), name).toBe(entry.status);
      expect(r[2], name).toBe(entry.title);
      expect((r[3] ?? '').replace(/`/g, ''), name).toBe(`${entry.category}/${name}`);
    }
  });

  it('the procedure table lists exactly the route table, with each kind', () => {
    const rows = tableRows('### Root keys, workspaces and permissions');
    const documented = new Map(rows.map((r) => [(r[0] ?? '').replace(/`/g, ''), r[1]]));
    expect(new Set(documented.keys())).toEqual(new Set(ROUTES.map((r) => r.procedure)));
    for (const route of ROUTES) expect(documented.get(route.procedure), route.procedure).toBe(route.kind);
  });
});
