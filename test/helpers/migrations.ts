// Helpers for the keys.migrateKeys suites: legacy keys and their hashes in each migration
// algorithm (src/domain/legacyHash.ts), and migrations made in the test's own store (an
// in-process server; a live server's are made with the CLI, `keyward migrations create`).
import { createHash, randomBytes } from 'node:crypto';
import type { MigrationAlgorithm } from '../../src/domain/legacyHash.js';
import { direct } from '../../src/store/db.js';
import { createMigration } from '../../src/store/migrations.js';
import { BASE58_ALPHABET } from './keys.js';
import type { InProcessServer } from './inProcess.js';

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');
export const sha256Base64 = (text: string): string => createHash('sha256').update(text).digest('base64');

/** A key some other system issued (any string; keyward never made it). */
export const legacyKey = (): string => `legacy_${randomBytes(16).toString('hex')}`;

function base58(length: number): string {
  return Array.from(randomBytes(length), (b) => BASE58_ALPHABET[b % 58]).join('');
}

/**
 * A github.com/seamapi/prefixed-api-key key, `<prefix>_<short token>_<long token>`, with its
 * hash (hex SHA-256 of the long token) and the `start` keyward gives it once moved.
 */
export function seamKey(prefix = 'mycompany'): { key: string; hash: string; longToken: string; start: string } {
  const shortToken = base58(8);
  const longToken = base58(24);
  const key = `${prefix}_${shortToken}_${longToken}`;
  return { key, hash: sha256Hex(longToken), longToken, start: `${prefix}_${shortToken.slice(0, 4)}` };
}

/** The hash of `key` a migration of this algorithm takes. */
export function legacyHash(algorithm: MigrationAlgorithm, key: string): string {
  if (algorithm === 'sha256') return sha256Hex(key);
  if (algorithm === 'sha256-base64') return sha256Base64(key);
  return sha256Hex(key.slice(key.lastIndexOf('_') + 1));
}

/** A new migration in the in-process server's store (default: its bootstrap workspace); its id. */
export function newMigration(server: InProcessServer, algorithm: MigrationAlgorithm, workspaceId = server.workspaceId): string {
  return direct.transact(() => createMigration(workspaceId, algorithm, Date.now())).id;
}
