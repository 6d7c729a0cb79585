// Hashes of keys made by other systems (keys.migrateKeys, keyward migrations). A migration
// names one algorithm; what keyward stores a migrated key under depends on it:
//  - `sha256` (hex) and `sha256-base64` are SHA-256 of the whole key, as keyward's own hash:
//    the key is stored under keyward's hash at once and verifies like any other key.
//  - `github.com/seamapi/prefixed-api-key` hashes only the long token (the text after the
//    key's last `_`), hex. The whole key is unknown until its first verification, so the key
//    is stored under a placeholder digest of the legacy hash, which no key string hashes to,
//    and moved under keyward's hash by the first VALID verifyKey {migrationId} of it. The
//    placeholder is one per legacy hash whatever the migration, so a legacy hash is held once
//    across the store, as any key hash is (a second migration of it, in any workspace, fails).
//    Stores written before that hold such keys under a digest of (migration id, legacy hash),
//    `formerPlaceholder`: those are still found through their migration and moved, and their
//    legacy hash still counts as held.
import { createHash } from 'node:crypto';

export const MIGRATION_ALGORITHMS = ['sha256', 'sha256-base64', 'github.com/seamapi/prefixed-api-key'] as const;
export type MigrationAlgorithm = (typeof MIGRATION_ALGORITHMS)[number];

export function isMigrationAlgorithm(name: string): name is MigrationAlgorithm {
  return (MIGRATION_ALGORITHMS as readonly string[]).includes(name);
}

/** Whether keys of this algorithm are stored under a placeholder until their first VALID verification. */
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
export function storedHash(algorithm: MigrationAlgorithm, legacyHash: string): Buffer | undefined {
  if (algorithm === 'sha256-base64') return BASE64_SHA256.test(legacyHash) ? Buffer.from(legacyHash, 'base64') : undefined;
  if (!HEX_SHA256.test(legacyHash)) return undefined;
  const digest = Buffer.from(legacyHash, 'hex');
  return algorithm === 'sha256' ? digest : placeholder(digest);
}

/**
 * Where a store written before placeholders were one per legacy hash may hold a key of this
 * (valid, hex) legacy hash: under the former placeholder of each migration needing a rehash
 * (`migrationIds`).
 */
export function formerStoredHashes(migrationIds: readonly string[], legacyHash: string): Buffer[] {
  const digest = Buffer.from(legacyHash, 'hex');
  return migrationIds.map((id) => formerPlaceholder(id, digest));
}

/**
 * The placeholders a presented key would be found under through a migration needing a
 * rehash: its placeholder, then its former one in that migration; undefined for a key not
 * of the library's shape, `<prefix>_<short token>_<long token>` (no part empty), which no
 * migrated key of it can be. Only the long token is checked against the hash (the library's
 * hash covers nothing else), so the first key of that shape with the right long token
 * becomes the migrated key (docs/moving-in.md, "Seam-style keys").
 */
export function placeholdersOfKey(migrationId: string, key: string): [Buffer, Buffer] | undefined {
  const parts = key.split('_');
  if (parts.length < 3 || parts.some((part) => part === '')) return undefined;
  const digest = createHash('sha256').update(parts[parts.length - 1] as string).digest();
  return [placeholder(digest), formerPlaceholder(migrationId, digest)];
}

/** A digest over a domain tag and the legacy digest: never a key's SHA-256. */
function placeholder(legacyDigest: Buffer): Buffer {
  return createHash('sha256').update('keyward-legacy-hash\0').update(legacyDigest).digest();
}

/** The placeholder of stores written before: a digest over another domain tag, the migration id and the legacy digest. */
function formerPlaceholder(migrationId: string, legacyDigest: Buffer): Buffer {
  return createHash('sha256').update('keyward-migration\0').update(migrationId).update('\0').update(legacyDigest).digest();
}
