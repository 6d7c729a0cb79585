import { DuckDBInstance } from '@duckdb/node-api';
import { translate } from './dist/src/analytics/dialect.js';
import { sqlParser } from './dist/src/analytics/database.js';
import { STORED_DDL } from './dist/src/analytics/schema.js';
import { readFileSync } from 'node:fs';
const con = await (await DuckDBInstance.create(':memory:')).connect();
for (const d of STORED_DDL) await con.run(d);
await con.run(`INSERT INTO verifications VALUES ('r1', ${Date.now()}, 'ws', 'ks', 'u1', 'k1', 'VALID', 'local', 'api', '', ['a=b','c'], 2)`);
await con.run(`INSERT INTO ratelimits VALUES ('l1', ${Date.now()}, 'ws', 'ns', 'nsn', 'id1', true, 1.5, '', 10, 5, ${Date.now()+60000}, 1)`);
const parser = sqlParser(con);
for (const line of readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean)) {
  const [kind, q] = line.split('|');
  const scope = { workspaceId: 'ws', kind: kind === 'r' ? 'ratelimits' : 'verifications' };
  try { const sql = await translate(q, scope, parser); const r = await con.runAndReadAll(sql); console.log('OK ', q.slice(0, 90), '→', JSON.stringify(r.getRowObjectsJson()[0] ?? null).slice(0, 100)); } catch (e) { console.log('ERR', q.slice(0, 90), '→', e.message.slice(0, 150)); }
}
