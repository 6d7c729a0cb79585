import type { ErrorObject } from 'ajv';
import type { ValidationItem } from './apiError.js';

// Fields v1 callers still send; named in the message so the caller knows why. Keyed by the
// field, or by "<procedure> <field>" for a field removed from one procedure only.
// A Map, so a field named like an Object.prototype member (`constructor`) finds nothing.
const REMOVED_V1_FIELDS: ReadonlyMap<string, string> = new Map<string, string>([
  ['async', 'the v1 `async` flag was removed in v2'],
  ['resources', 'v1 `resources` were removed in v2'],
  ['ratelimit', 'v2 takes a `ratelimits` array of named limits instead of the single v1 `ratelimit` object'],
  ['ratelimits.limit meta', 'v1 `meta` was removed from ratelimits.limit in v2'],
]);

function location(instancePath: string): string {
  if (instancePath === '') return 'body';
  return 'body' + instancePath.split('/').slice(1).map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg.replace(/~1/g, '/').replace(/~0/g, '~')}`)).join('');
}

/**
 * A failed anyOf (a nullable field: `[schema, {type: null}]`) counts as one failure: ajv
 * reports every branch's errors and then the anyOf's own. Kept: the errors of the branches
 * whose type the value has (`body.value must be >= 0`); when it has none of their types, one
 * type error naming them all (`must be integer or null`).
 */
function collapseAnyOf(errors: readonly ErrorObject[]): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  const replaced = new Map<ErrorObject, ErrorObject>();
  for (const anyOf of errors.filter((e) => e.keyword === 'anyOf')) {
    const prefix = `${anyOf.schemaPath}/`;
    const branches = new Map<string, ErrorObject[]>();
    for (const e of errors) {
      if (!e.schemaPath.startsWith(prefix)) continue;
      const branch = e.schemaPath.slice(prefix.length).split('/')[0] ?? '';
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    const wrongType = (e: ErrorObject): boolean => e.keyword === 'type' && e.instancePath === anyOf.instancePath;
    const ofItsType = [...branches.values()].filter((list) => !list.some(wrongType));
    for (const list of branches.values()) if (ofItsType.length === 0 || list.some(wrongType)) for (const e of list) dropped.add(e);
    if (ofItsType.length > 0) dropped.add(anyOf);
    else {
      const types = new Set([...branches.values()].flatMap((list) => list.filter(wrongType).map((e) => String((e.params as { type: unknown }).type))));
      replaced.set(anyOf, { ...anyOf, keyword: 'type', params: { type: [...types].join(' or ') } });
    }
  }
  return errors.flatMap((e) => replaced.get(e) ?? (dropped.has(e) ? [] : [e]));
}

/** ajv errors → one ValidationItem per failure, with messages that name the field. */
export function fromAjv(errors: readonly ErrorObject[], procedure: string): ValidationItem[] {
  return collapseAnyOf(errors).map((e): ValidationItem => {
    const at = location(e.instancePath);
    const p = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'additionalProperties': {
        const field = String(p.additionalProperty);
        const why = REMOVED_V1_FIELDS.get(`${procedure} ${field}`) ?? REMOVED_V1_FIELDS.get(field);
        return {
          location: at === 'body' ? `body.${field}` : `${at}.${field}`,
          message: `unknown field '${field}' is not accepted by ${procedure}${why ? ` (${why})` : ''}`,
          fix: `remove '${field}' from ${at}`,
        };
      }
      case 'required':
        return { location: `${at === 'body' ? 'body' : at}.${String(p.missingProperty)}`, message: `'${String(p.missingProperty)}' is required`, fix: `add '${String(p.missingProperty)}'` };
      case 'type':
        return { location: at, message: `${at} must be ${String(p.type)}` };
      case 'minLength':
        return { location: at, message: `${at} must be at least ${String(p.limit)} characters long` };
      case 'maxLength':
        return { location: at, message: `${at} must be at most ${String(p.limit)} characters long` };
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        return { location: at, message: `${at} must be ${String(p.comparison)} ${String(p.limit)}` };
      case 'minItems':
        return { location: at, message: `${at} must have at least ${String(p.limit)} items` };
      case 'maxItems':
        return { location: at, message: `${at} must have at most ${String(p.limit)} items` };
      case 'pattern':
        return { location: at, message: `${at} must match ${String(p.pattern)}` };
      case 'enum':
        return { location: at, message: `${at} must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
      default:
        return { location: at, message: `${at} ${e.message ?? 'is invalid'}` };
    }
  });
}
