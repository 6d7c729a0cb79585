// What a root key may do (DESIGN.md §2 "Authentication and tenancy"). A grant (stored
// normalised, domain/grants.ts) matches a needed permission `resource.resource_id.action`
// when every segment is equal or the grant's segment is `*`; the grant `*` alone allows all.
import type { Resource } from '../domain/grants.js';

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

  /** The APIs (`apis`) or namespaces (`ratelimits`) whose analytics this root key may read (see scopeOf). */
  analyticsScope(resource: 'apis' | 'ratelimits'): string | null {
    return this.scopeOf(resource, 'read_analytics');
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
