// GET /openapi.json: an OpenAPI 3.1 document generated from the route table's schemas —
// the same objects ajv validates with, so the document cannot drift from the server.
import { CATALOGUE, ERROR_NAMES } from '../errors/catalogue.js';
import { badRequestEnvelopeSchema, errorEnvelopeSchema, metaSchema, object, paginationSchema, type JsonSchema } from '../schemas/common.js';
import { describeRule, type Route } from './routes.js';

export function openApiDocument(routes: readonly Route[], publicUrl: string, version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const statuses = [...new Set(ERROR_NAMES.map((n) => CATALOGUE[n].status))].sort();
  for (const route of routes) {
    const [namespace] = route.procedure.split('.');
    const data: JsonSchema = route.list === true ? { type: 'array', items: route.response } : route.response;
    const success: JsonSchema = {
      type: 'object',
      properties: route.list === true ? { meta: metaSchema, data, pagination: paginationSchema } : { meta: metaSchema, data },
      required: route.list === true ? ['meta', 'data', 'pagination'] : ['meta', 'data'],
    };
    const responses: Record<string, unknown> = { '200': { description: 'Success', content: { 'application/json': { schema: success } } } };
    for (const status of statuses) {
      const schema = status === 400 ? 'BadRequestEnvelope' : 'ErrorEnvelope';
      responses[String(status)] = { description: ERROR_NAMES.filter((n) => CATALOGUE[n].status === status).join(', '), content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } };
    }
    const operation = {
      operationId: route.procedure,
      tags: [namespace],
      summary: route.summary,
      description: `Root-key permissions: ${[...route.permissions.map(describeRule), ...(route.handlerPermissions === undefined ? [] : [route.handlerPermissions])].join('; ') || 'none'} (or grants with \`*\` segments covering them).`,
      security: [{ rootKey: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: route.request } } },
      responses,
    };
    paths[`/v2/${route.procedure}`] = { post: operation };
    if (namespace === 'ratelimits') paths[`/v2/${route.procedure.replace(/^ratelimits\./, 'ratelimit.')}`] = { post: { ...operation, operationId: route.procedure.replace(/^ratelimits\./, 'ratelimit.') } };
  }
  // The GET pages (src/serve.ts), no auth.
  const liveness = object({ meta: metaSchema, data: object({ message: { type: 'string' } }, ['message']) }, ['meta', 'data']);
  paths['/v2/liveness'] = { get: { operationId: 'liveness', summary: 'Liveness probe (no auth).', responses: { '200': { description: 'Alive', content: { 'application/json': { schema: liveness } } } } } };
  paths['/metrics'] = { get: { operationId: 'metrics', summary: 'Prometheus metrics, text exposition format 0.0.4 (no auth).', responses: { '200': { description: 'Metrics', content: { 'text/plain': { schema: { type: 'string' } } } } } } };
  paths['/openapi.json'] = { get: { operationId: 'openapi', summary: 'This document (no auth).', responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } } } };
  return {
    openapi: '3.1.0',
    info: { title: 'keyward', version, description: 'API keys and rate limiting, wire-compatible with Unkey v2.' },
    servers: [{ url: publicUrl }],
    components: {
      securitySchemes: { rootKey: { type: 'http', scheme: 'bearer', description: 'A keyward root key' } },
      schemas: { ErrorEnvelope: errorEnvelopeSchema, BadRequestEnvelope: badRequestEnvelopeSchema },
    },
    paths,
  };
}
