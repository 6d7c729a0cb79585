// The engine contract has one TypeScript face (src/engine/native.ts): it must say exactly what
// native/src/lib.rs exports, the table list must be the store's, and the bounds the engine's
// body readers check must be the schemas'.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { boundsMismatches, engineBounds } from '../../src/engine/bounds.js';
import { EXPORT_NAMES, native } from '../../src/engine/native.js';
import { TABLES } from '../../src/engine/tables.js';
import { ROUTES } from '../../src/rpc/routes.js';
import { ROOT } from '../helpers/server.js';

const hotSchemas = (): Map<string, Record<string, unknown>> => new Map(ROUTES.filter((r) => r.kind === 'hot').map((r) => [r.procedure, r.request]));

describe('the engine contract', () => {
  it("lib.rs's export table and the NativeModule interface name the same exports", () => {
    const table = readFileSync(join(ROOT, 'native', 'src', 'lib.rs'), 'utf8');
    const exported = [...table.matchAll(/^\s*c"([A-Za-z_0-9]+)"\s*=>/gm)].map((m) => m[1]);
    expect(exported.length).toBeGreaterThan(20);
    expect([...exported].sort()).toEqual([...EXPORT_NAMES].sort());
  });

  it('the built module exports exactly those functions', () => {
    const addon = createRequire(import.meta.url)(join(ROOT, 'native', 'keyward.node')) as Record<string, unknown>;
    expect(Object.keys(addon).sort()).toEqual([...EXPORT_NAMES].sort());
    for (const name of EXPORT_NAMES) expect(typeof addon[name], name).toBe('function');
  });

  it("the store's tables, in id order, are src/engine/tables.ts's", () => {
    expect(native.tables()).toEqual([...TABLES]);
  });

  it("the body readers' bounds are the request schemas'", () => {
    const bounds = engineBounds();
    expect(new Set(bounds.map((b) => b.procedure))).toEqual(new Set(['keys.verifyKey', 'ratelimits.limit', 'ratelimits.multiLimit']));
    expect(boundsMismatches(bounds, hotSchemas())).toEqual([]);
  });

  it('a schema that moved a bound is named, so a change on one side only is caught', () => {
    const schemas = hotSchemas();
    const verify = structuredClone(schemas.get('keys.verifyKey') as Record<string, unknown>) as { properties: { key: { maxLength: number }; ratelimits: { items: { properties: { name: { pattern?: string } } } } } };
    verify.properties.key.maxLength = 513;
    delete verify.properties.ratelimits.items.properties.name.pattern;
    schemas.set('keys.verifyKey', verify);
    expect(boundsMismatches(engineBounds(), schemas)).toEqual([
      'keys.verifyKey key: maxLength 513 in the schema, 512 in the engine',
      'keys.verifyKey ratelimits/items/name: pattern undefined in the schema, printable=true in the engine',
    ]);
  });
});
