import type { ErrorName } from './catalogue.js';

/** One validation problem of a 400: where it is (`body.field.path`), what is wrong, how to fix it. */
export interface ValidationItem {
  location: string;
  message: string;
  fix?: string;
}

/**
 * What handlers throw. Only `rpc/dispatch.ts` turns it into an envelope; the catalogue
 * decides status and title from `name`. These are answers to the client, not faults, so no
 * stack trace is captured (capturing one cost a tenth of an error reply).
 */
export class ApiError extends Error {
  readonly errorName: ErrorName;
  readonly detail: string;
  readonly errors: ValidationItem[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(name: ErrorName, detail: string, opts: { errors?: ValidationItem[]; headers?: Record<string, string> } = {}) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(`${name}: ${detail}`);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.errorName = name;
    this.detail = detail;
    this.errors = opts.errors;
    this.headers = opts.headers;
  }
}

/** A 400 invalid_input for a rule the schema cannot express (cross-field, sizes). */
export function invalidInput(location: string, message: string, fix?: string): ApiError {
  return new ApiError('invalid_input', `${location}: ${message}.`, { errors: [fix === undefined ? { location, message } : { location, message, fix }] });
}
