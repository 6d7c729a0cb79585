// Shared JSON Schema pieces. Schemas are plain data: ajv compiles them once at start-up and
// /openapi.json is generated from the very same objects.

export type JsonSchema = Record<string, unknown>;

export const idString = (min = 3, max = 255): JsonSchema => ({ type: 'string', minLength: min, maxLength: max, pattern: '^[a-zA-Z0-9_]+$' });

export const pageLimit = (def: number, max: number): JsonSchema => ({ type: 'integer', minimum: 1, maximum: max, default: def });

export const cursorField: JsonSchema = { type: 'string', maxLength: 1024, description: 'pagination.cursor of the previous page; omit for the first page' };

/** The window of ratelimits.limit and of an ad-hoc limit in keys.verifyKey: at most 30 days (reference §1.3). Stored limits (key and identity limits, overrides) have no maximum, as Unkey. */
export const MAX_DURATION_MS = 2_592_000_000;

export function object(properties: Record<string, JsonSchema>, required: readonly string[] = []): JsonSchema {
  return { type: 'object', additionalProperties: false, properties, required: [...required] };
}

export const emptyObject: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };

export const metaSchema: JsonSchema = object({ requestId: { type: 'string' } }, ['requestId']);

export const paginationSchema: JsonSchema = object({ cursor: { type: 'string' }, hasMore: { type: 'boolean' } }, ['hasMore']);

export const validationItemSchema: JsonSchema = object({ location: { type: 'string' }, message: { type: 'string' }, fix: { type: 'string' } }, ['location', 'message']);

const errorEnvelope = (required: readonly string[]): JsonSchema =>
  object(
    {
      meta: metaSchema,
      error: object(
        {
          title: { type: 'string' },
          detail: { type: 'string' },
          status: { type: 'integer' },
          type: { type: 'string', format: 'uri' },
          errors: { type: 'array', items: validationItemSchema },
        },
        ['title', 'detail', 'status', 'type', ...required],
      ),
    },
    ['meta', 'error'],
  );

export const errorEnvelopeSchema: JsonSchema = errorEnvelope([]);
/** A 400 always carries `error.errors` (possibly empty; the SDK requires the array). */
export const badRequestEnvelopeSchema: JsonSchema = errorEnvelope(['errors']);
