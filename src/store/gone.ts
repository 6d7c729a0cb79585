// Permissions deleted but not yet taken off every key that held them (store/cascades.ts):
// META `perm_gone/<workspaceId>/<slug>` → the deleted permission's id. Verification (native
// verify.rs, same layout), key views and key writes read a key's permissions without them.
import { getText, scanPrefix } from './db.js';

const GONE_PREFIX = 'perm_gone/';

export const goneKey = (workspaceId: string, slug: string): string => `${GONE_PREFIX}${workspaceId}/${slug}`;

/** The deleted permission's id if `slug` is gone in the workspace (its keys not all unlinked yet). */
export function gonePermissionId(workspaceId: string, slug: string): string | undefined {
  return getText('meta', goneKey(workspaceId, slug));
}

/** Every gone permission of every workspace (the unlinkings of permissions not finished yet). */
export function allGone(): { workspaceId: string; slug: string; id: string }[] {
  return scanPrefix('meta', GONE_PREFIX, undefined, Number.MAX_SAFE_INTEGER).map((e) => {
    const rest = e.key.slice(GONE_PREFIX.length);
    const cut = rest.indexOf('/');
    return { workspaceId: rest.slice(0, cut), slug: rest.slice(cut + 1), id: e.value.toString('utf8') };
  });
}

/** The slugs gone in the workspace; usually none (one positioning in the store). */
export function gonePermissions(workspaceId: string): Set<string> {
  const prefix = `${GONE_PREFIX}${workspaceId}/`;
  return new Set(scanPrefix('meta', prefix, undefined, Number.MAX_SAFE_INTEGER).map((e) => e.key.slice(prefix.length)));
}

/** `permissions` without the gone ones (the same array when none is gone). */
export function withoutGone(workspaceId: string, permissions: readonly string[]): readonly string[] {
  if (permissions.length === 0) return permissions;
  const gone = gonePermissions(workspaceId);
  return gone.size === 0 ? permissions : permissions.filter((s) => !gone.has(s));
}
