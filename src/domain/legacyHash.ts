// Hashes of keys made by other systems (keys.migrateKeys, keyward migrations). A migration
// names one algorithm; what keyward stores a migrated key under depends on it:
//  - `sha256` (hex) and `sha256-base64` are SHA-256 of the whole key, as keyward's own hash:
//    the key is stored under keyward's hash at once and verifies like any other key.
//  - `github.com/seamapi/prefixed-api-key` hashes only the long token (the text after the
//    key's last `_`), hex. The whole key is unknown until its first verification, so the key
//    is stored under a placeholder digest of (migration id, legacy hash), which no key string
//    hashes to, and moved under keyward's hash when verifyKey {migrationId} first sees it.
import { createHash } from 'node:crypto';

export const MIGRATION_ALGORITHMS = ['sha256', 'sha256-base64', 'github.com/seamapi/prefixed-api-key'] as const;
export type MigrationAlgorithm = (typeof MIGRATION_ALGORITHMS)[number];

export function isMigrationAlgorithm(name: string): name is MigrationAlgorithm {
  return (MIGRATION_ALGORITHMS as readonly string[]).includes(name);
}

/** Whether keys of this algorithm are stored under a placeholder until their first use. */
export function needsRehash(algorithm: MigrationAlgorithm): boolean {
  return algorithm === 'github.com/seamapi/prefixed-api-key';
}

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const BASE64_SHA256 = /^[A-Za-z0-9+/_-]{43}=?$/;

/** What a legacy hash of this algorithm looks like, for error messages. */
export function legacyHashShape(algorithm: MigrationAlgorithm): string {
  return algorithm === 'sha256-base64' ? 'the base64 of a SHA-256 digest (43 characters and =)' : 'a SHA-256 digest in hex (64 characters 0-9a-f)';
}

/**
 * The 32 bytes a migrated key is stored under (key_records), from the hash the caller had;
 * undefined when the text is not a hash of this algorithm.
 */
export function storedHash(algorithm: MigrationAlgorithm, migrationId: string, legacyHash: string): Buffer | undefined {
  if (algorithm === 'sha256-base64') return BASE64_SHA256.test(legacyHash) ? Buffer.from(legacyHash, 'base64') : undefined;
  if (!HEX_SHA256.test(legacyHash)) return undefined;
  const digest = Buffer.from(legacyHash, 'hex');
  return algorithm === 'sha256' ? digest : placeholder(migrationId, digest);
}

/**
 * The placeholder a presented key would be found under, for algorithms that need a rehash;
 * undefined for a key not of the library's shape, `<prefix>_<short token>_<long token>` (no
 * part empty), which no migrated key of it can be. Only the long token is checked against
 * the hash (the library's hash covers nothing else), so the first key of that shape with
 * the right long token becomes the migrated key (docs/moving-in.md, "Seam-style keys").
 */
export function placeholderOfKey(migrationId: string, key: string): Buffer | undefined {
  const parts = key.split('_');
  if (parts.length < 3 || parts.some((part) => part === '')) return undefined;
  return placeholder(migrationId, createHash('sha256').update(parts[parts.length - 1] as string).digest());
}

/** A digest over a domain tag, the migration id and the legacy digest: never a key's SHA-256. */
function placeholder(migrationId: string, legacyDigest: Buffer): Buffer {
  return createHash('sha256').update('keyward-migration\0').update(migrationId).update('\0').update(legacyDigest).digest();
}
