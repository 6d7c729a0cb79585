// Root-key permission grants (DESIGN.md §2 "Authentication and tenancy").
// A permission is `resource.resource_id.action`. A grant matches a needed permission when
// every segment is equal or the grant's segment is `*`; the grant `*` alone allows all.
// Resource names: the spec's (`apis`, `ratelimits`, `identities`, `rbac`) are canonical;
// Unkey's (`api`, `ratelimit`, `identity`) are accepted as aliases on both sides.

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

function segmentMatches(granted: string | undefined, needed: string): boolean {
  return granted === '*' || granted === needed;
}

/** Does one (normalised) grant allow `resource.id.action`? */
export function grantAllows(grant: string, resource: string, id: string, action: string): boolean {
  if (grant === '*') return true;
  const [r, i, a, extra] = grant.split('.');
  return extra === undefined && segmentMatches(r, resource) && segmentMatches(i, id) && segmentMatches(a, action);
}

/** Does one grant allow `action` on at least one resource id (for "has any verify grant")? */
export function grantAllowsSomeId(grant: string, resource: string, action: string): boolean {
  if (grant === '*') return true;
  const [r, , a, extra] = grant.split('.');
  return extra === undefined && segmentMatches(r, resource) && segmentMatches(a, action);
}

export class Principal {
  constructor(
    readonly workspaceId: string,
    readonly rootKeyId: string,
    readonly grants: readonly string[],
  ) {}

  /** `resource.*.action` or `resource.<id>.action`; with no id, only `resource.*.action`. */
  can(resource: Resource, id: string | undefined, action: string): boolean {
    const target = id ?? '*';
    return this.grants.some((g) => grantAllows(g, resource, target, action));
  }

  canSomewhere(resource: Resource, action: string): boolean {
    return this.grants.some((g) => grantAllowsSomeId(g, resource, action));
  }

  private verifyScopeMemo: string | null | undefined;
  private limitScopeMemo: string | null | undefined;

  /** The APIs whose keys this root key may verify, as the engine takes them (see scopeOf). */
  verifyScope(): string | null {
    if (this.verifyScopeMemo === undefined) this.verifyScopeMemo = this.scopeOf('apis', 'verify_key');
    return this.verifyScopeMemo;
  }

  /** The rate-limit namespaces this root key may limit in, as the engine takes them (see scopeOf). */
  limitScope(): string | null {
    if (this.limitScopeMemo === undefined) this.limitScopeMemo = this.scopeOf('ratelimits', 'limit');
    return this.limitScopeMemo;
  }

  /**
   * The ids of `resource` that `action` is allowed on, as the engine takes them: "*" for every
   * one of the workspace, else the ids of the `resource.<id>.action` grants joined by "\n";
   * null when no grant allows the action at all.
   */
  private scopeOf(resource: Resource, action: string): string | null {
    if (this.can(resource, '*', action)) return '*';
    const ids = this.grants.filter((g) => grantAllowsSomeId(g, resource, action)).map((g) => g.split('.')[1] ?? '');
    return ids.length === 0 ? null : ids.join('\n');
  }
}

/** The permission strings that would satisfy `can(resource, id, action)`, for error details. */
export function neededPermissions(resource: Resource, id: string | undefined, action: string): string[] {
  return id === undefined || id === '*' ? [`${resource}.*.${action}`] : [`${resource}.*.${action}`, `${resource}.${id}.${action}`];
}
