// Root-key grants as text (DESIGN.md §2 "Authentication and tenancy"): a permission is
// `resource.resource_id.action`; the grant `*` alone allows everything. Resource names: the
// spec's (`apis`, `ratelimits`, `identities`, `rbac`) are canonical; Unkey's (`api`,
// `ratelimit`, `identity`) are accepted as aliases on both sides. Matching is auth/permissions.ts's.

const RESOURCE_ALIASES: Record<string, string> = { api: 'apis', ratelimit: 'ratelimits', identity: 'identities' };

export type Resource = 'apis' | 'ratelimits' | 'identities' | 'rbac';

export function canonicalResource(name: string): string {
  return RESOURCE_ALIASES[name] ?? name;
}

/** Normalises a grant for storage and comparison: aliases → canonical resource names. */
export function normalizeGrant(grant: string): string {
  if (grant === '*') return grant;
  const parts = grant.split('.');
  parts[0] = canonicalResource(parts[0] ?? '');
  return parts.join('.');
}

/** A grant is `*` or three non-empty segments of `[A-Za-z0-9_*-]`. */
export function isValidGrant(grant: string): boolean {
  return grant === '*' || /^[A-Za-z0-9_*-]+\.[A-Za-z0-9_*-]+\.[A-Za-z0-9_*-]+$/.test(grant);
}

