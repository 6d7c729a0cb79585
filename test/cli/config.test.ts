// Configuration from the environment (src/config.ts; README §Configuration): defaults, and
// a bad value stops start-up with a message naming the variable.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ host: '127.0.0.1', port: 8080, durability: 'process', syncIntervalMs: 100, threads: 1, writeMap: true, verifyCacheSlots: 131_072 });
    expect(loadConfig({ KEYWARD_DURABILITY: 'disk' }).writeMap).toBe(false);
  });

  it('KEYWARD_VERIFY_CACHE: 0 turns the cache off, up to 16777216 slots', () => {
    expect(loadConfig({ KEYWARD_VERIFY_CACHE: '0' }).verifyCacheSlots).toBe(0);
    expect(loadConfig({ KEYWARD_VERIFY_CACHE: '16777216' }).verifyCacheSlots).toBe(16_777_216);
    for (const bad of ['-1', '1.5', 'lots', '16777217']) {
      expect(() => loadConfig({ KEYWARD_VERIFY_CACHE: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ KEYWARD_VERIFY_CACHE: bad }), bad).toThrow(/KEYWARD_VERIFY_CACHE/);
    }
  });

  it('other variables name themselves when bad', () => {
    for (const [name, value] of [['KEYWARD_PORT', '70000'], ['KEYWARD_DURABILITY', 'fast'], ['KEYWARD_THREADS', '0'], ['KEYWARD_WRITE_MAP', 'maybe'], ['KEYWARD_VAULT_KEY', 'short']] as const) {
      expect(() => loadConfig({ [name]: value }), name).toThrow(new RegExp(name));
    }
  });
});
