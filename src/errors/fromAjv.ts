import type { ErrorObject } from 'ajv';
import type { ValidationItem } from './apiError.js';

// Fields v1 callers still send; named in the message so the caller knows why. Keyed by the
// field, or by "<procedure> <field>" for a field removed from one procedure only.
// A Map, so a field named like an Object.prototype member (`constructor`) finds nothing.
const REMOVED_V1_FIELDS = new Map<string, string>([
  ['async', 'the v1 `async` flag was removed in v2'],
  ['resources', 'v1 `resources` were removed in v2'],
  ['ratelimit', 'v2 takes a `ratelimits` array of named limits instead of the single v1 `ratelimit` object'],
  ['ratelimits.limit meta', 'v1 `meta` was removed from ratelimits.limit in v2'],
]);

function location(instancePath: string): string {
  if (instancePath === '') return 'body';
  return 'body' + instancePath.split('/').slice(1).map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg.replace(/~1/g, '/').replace(/~0/g, '~')}`)).join('');
}

/** ajv errors → one ValidationItem each, with messages that name the field. */
export function fromAjv(errors: readonly ErrorObject[], procedure: string): ValidationItem[] {
  return errors.map((e): ValidationItem => {
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
