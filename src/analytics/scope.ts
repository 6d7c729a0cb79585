/**
 * A root key's analytics scope (Principal.analyticsScope: "*", ids joined by "\n", or null)
 * as a query's `ids`: undefined for every id of the workspace. requireSomewhere has refused
 * a key with no grant (null) before this is asked.
 */
export function scopeIds(scope: string | null): readonly string[] | undefined {
  return scope === '*' ? undefined : (scope ?? '').split('\n').filter((id) => id !== '');
}
