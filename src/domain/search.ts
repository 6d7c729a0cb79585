// The `search` filter of listPermissions, listRoles and listIdentities: a case-insensitive
// substring of any of the given fields. No search (or an empty one) matches everything.
export function searchFilter(search: string | undefined): (...fields: (string | undefined)[]) => boolean {
  const needle = (search ?? '').toLowerCase();
  if (needle === '') return () => true;
  return (...fields) => fields.some((f) => f !== undefined && f.toLowerCase().includes(needle));
}

/**
 * The list tag of a cursor: a cursor of one workspace's list, or of one search, is not
 * replayed against another (400 invalid_cursor).
 */
export function listTag(list: string, workspaceId: string, search: string | undefined): string {
  return `${list}:${workspaceId}:${(search ?? '').toLowerCase()}`;
}
