// Configuration from the environment (src/config.ts; README §Configuration): defaults, and
// a bad value stops start-up with a message naming the variable.
import { describe, expect, it } from 'vitest';
import { boundPublicUrl, ConfigError, loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ host: '127.0.0.1', port: 8080, durability: 'process', syncIntervalMs: 100, threads: 1, writeMap: false, verifyCacheSlots: 131_072 });
    expect(loadConfig({ KEYWARD_DURABILITY: 'disk' }).writeMap).toBe(false);
    expect(loadConfig({ KEYWARD_WRITE_MAP: 'on' }).writeMap).toBe(true);
    // Analytics is on unless turned off (DESIGN.md §5).
    expect(c.analytics).toMatchObject({ region: 'local', retentionDays: 30 });
    expect(loadConfig({ KEYWARD_ANALYTICS: 'off' }).analytics).toBeUndefined();
    expect(() => loadConfig({ KEYWARD_ANALYTICS: 'maybe' })).toThrow(ConfigError);
    // Off, its other settings are still checked: a bad value is not left to bite when it is turned on.
    expect(() => loadConfig({ KEYWARD_ANALYTICS: 'off', KEYWARD_ANALYTICS_RETENTION_DAYS: '0' })).toThrow(/KEYWARD_ANALYTICS_RETENTION_DAYS/);
    expect(() => loadConfig({ KEYWARD_ANALYTICS: 'off', KEYWARD_REGION: 'a_b_c!' })).toThrow(/KEYWARD_REGION/);
    expect(c.analytics?.priority).toBe('idle');
    expect(loadConfig({ KEYWARD_ANALYTICS_PRIORITY: 'normal' }).analytics?.priority).toBe('normal');
    expect(() => loadConfig({ KEYWARD_ANALYTICS_PRIORITY: 'high' })).toThrow(/KEYWARD_ANALYTICS_PRIORITY/);
  });

  it('KEYWARD_VERIFY_CACHE: 0 turns the cache off, up to 16777216 slots', () => {
    expect(loadConfig({ KEYWARD_VERIFY_CACHE: '0' }).verifyCacheSlots).toBe(0);
    expect(loadConfig({ KEYWARD_VERIFY_CACHE: '16777216' }).verifyCacheSlots).toBe(16_777_216);
    for (const bad of ['-1', '1.5', 'lots', '16777217']) {
      expect(() => loadConfig({ KEYWARD_VERIFY_CACHE: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ KEYWARD_VERIFY_CACHE: bad }), bad).toThrow(/KEYWARD_VERIFY_CACHE/);
    }
  });

  it('KEYWARD_VAULT_KEY: 32 bytes in base64 or base64url, nothing else', () => {
    const key = Buffer.alloc(32, 0xfb);
    for (const good of [key.toString('base64'), key.toString('base64url'), key.toString('base64').replace(/=$/, '')]) {
      expect(loadConfig({ KEYWARD_VAULT_KEY: good }).vaultKey, good).toBe(good);
    }
    for (const bad of [Buffer.alloc(31).toString('base64'), Buffer.alloc(33).toString('base64'), `${key.toString('base64').slice(0, 40)} ${key.toString('base64').slice(40)}`]) {
      expect(() => loadConfig({ KEYWARD_VAULT_KEY: bad }), bad).toThrow(/KEYWARD_VAULT_KEY/);
    }
  });

  it('other variables name themselves when bad', () => {
    for (const [name, value] of [['KEYWARD_PORT', '70000'], ['KEYWARD_DURABILITY', 'fast'], ['KEYWARD_THREADS', '0'], ['KEYWARD_WRITE_MAP', 'maybe'], ['KEYWARD_VAULT_KEY', 'short'], ['KEYWARD_VAULT_KEY', `!!!!${'A'.repeat(43)}=`], ['KEYWARD_PUBLIC_URL', 'notaurl'], ['KEYWARD_PUBLIC_URL', 'ftp://x']] as const) {
      expect(() => loadConfig({ [name]: value }), name).toThrow(new RegExp(name));
    }
  });

  it('KEYWARD_REQUEST_TIMEOUT_MS: default 5000, at most 7000 (uWebSockets.js drops a stalled body at about 8–10 s)', () => {
    expect(loadConfig({}).requestTimeoutMs).toBe(5_000);
    expect(loadConfig({ KEYWARD_REQUEST_TIMEOUT_MS: '7000' }).requestTimeoutMs).toBe(7_000);
    expect(() => loadConfig({ KEYWARD_REQUEST_TIMEOUT_MS: '7001' })).toThrow(/KEYWARD_REQUEST_TIMEOUT_MS/);
  });

  it('KEYWARD_PORT=0 needs one serving thread; public URLs, also once port 0 is bound', () => {
    expect(() => loadConfig({ KEYWARD_PORT: '0', KEYWARD_THREADS: '2' })).toThrow(/KEYWARD_PORT=0.*KEYWARD_THREADS=1/);
    expect(boundPublicUrl(loadConfig({ KEYWARD_PORT: '0' }), 40123)).toBe('http://127.0.0.1:40123');
    expect(boundPublicUrl(loadConfig({ KEYWARD_PORT: '0', KEYWARD_PUBLIC_URL: 'https://k.example' }), 40123)).toBe('https://k.example');
    expect(boundPublicUrl(loadConfig({ KEYWARD_PORT: '8080' }), 8080)).toBe('http://127.0.0.1:8080');
    expect(loadConfig({ KEYWARD_HOST: '::1', KEYWARD_PORT: '9000' }).publicUrl).toBe('http://[::1]:9000');
    expect(loadConfig({ KEYWARD_PUBLIC_URL: 'https://keys.example.com/' }).publicUrl).toBe('https://keys.example.com');
  });
});
