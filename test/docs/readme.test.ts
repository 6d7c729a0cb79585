// The README's error table and procedure table are checked against the code both ways, so
// the docs cannot drift from the catalogue and the route table; and README stays a front
// door (the rest of the documentation is in docs/, whose links test/docs/links.test.ts checks).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, ERROR_NAMES } from '../../src/errors/catalogue.js';
import { describeRule, ROUTES } from '../../src/rpc/routes.js';

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

  it('the procedure table lists exactly the route table, with each kind and the permissions checked before the handler', () => {
    const rows = tableRows('## Procedures');
    const documented = new Map(rows.map((r) => [(r[0] ?? '').replace(/`/g, ''), r]));
    expect(new Set(documented.keys())).toEqual(new Set(ROUTES.map((r) => r.procedure)));
    for (const route of ROUTES) {
      const row = documented.get(route.procedure) ?? [];
      expect(row[1], route.procedure).toBe(route.kind);
      for (const rule of route.permissions) expect(row[2], route.procedure).toContain(describeRule(rule));
    }
  });

  it('the configuration table lists exactly the environment variables src/config.ts reads', () => {
    const configSource = readFileSync(new URL('../../src/config.ts', import.meta.url), 'utf8');
    const read = new Set(configSource.match(/KEYWARD_[A-Z_]+/g));
    const documented = tableRows('## Configuration').map((r) => /`(KEYWARD_[A-Z_]+)`/.exec(r[0] ?? '')?.[1]);
    expect(new Set(documented)).toEqual(read);
    expect(documented.length, 'each once').toBe(read.size);
  });

  it('the CLI section shows exactly the commands of src/cli.ts', () => {
    const cliSource = readFileSync(new URL('../../src/cli.ts', import.meta.url), 'utf8');
    const usage = /const USAGE = `([^`]*)`/.exec(cliSource)?.[1] ?? '';
    const commands = (lines: string[]): Set<string> =>
      new Set(lines.map((l) => /^(serve|help|bench|backup|restore|check|export|import|[a-z-]+ [a-z]+)\b/.exec(l)?.[1]).filter((c): c is string => c !== undefined));
    const inUsage = commands(usage.split('\n').slice(1).map((l) => l.trim()));
    const section = readme.slice(readme.indexOf('## CLI'), readme.indexOf('\n## ', readme.indexOf('## CLI') + 1));
    const inReadme = commands(section.split('\n').filter((l) => l.startsWith('keyward ')).map((l) => l.slice('keyward '.length)));
    expect(inUsage.size).toBeGreaterThan(5);
    expect(inReadme).toEqual(inUsage);
  });

  it('is at most 400 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(401); // the last line ends with a newline
  });
});
