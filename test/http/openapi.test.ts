// GET /openapi.json: OpenAPI 3.1, one POST path per procedure in ROUTES, each with its request
// schema and the bearer security scheme.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/rpc/routes.js';
import { liveServer } from '../helpers/live.js';
import { call, get } from '../helpers/server.js';

const srv = liveServer();

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<string, unknown>;
}

async function doc(): Promise<{ openapi: string; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, { type: string; scheme: string }> } }> {
  const res = await get(srv(), '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json;
}

const procedurePaths = (paths: Record<string, unknown>): string[] => Object.keys(paths).filter((p) => p.startsWith('/v2/') && p !== '/v2/liveness');

describe('/openapi.json', () => {
  it('is OpenAPI 3.1', async () => {
    expect((await doc()).openapi).toMatch(/^3\.1\.\d+$/);
  });

  it('lists exactly the procedures of ROUTES (ratelimits.* also as ratelimit.*)', async () => {
    const expected = new Set<string>();
    for (const r of ROUTES) {
      expected.add(`/v2/${r.procedure}`);
      if (r.procedure.startsWith('ratelimits.')) expected.add(`/v2/${r.procedure.replace(/^ratelimits\./, 'ratelimit.')}`);
    }
    expect(new Set(procedurePaths((await doc()).paths))).toEqual(expected);
  });

  it('every procedure is a POST with a JSON request schema and the bearer scheme', async () => {
    const d = await doc();
    const schemes = d.components.securitySchemes;
    const bearer = Object.entries(schemes).filter(([, s]) => s.type === 'http' && s.scheme.toLowerCase() === 'bearer').map(([name]) => name);
    expect(bearer.length).toBeGreaterThan(0);
    for (const path of procedurePaths(d.paths)) {
      const methods = d.paths[path] ?? {};
      expect(Object.keys(methods), path).toEqual(['post']);
      const op = methods.post as Operation;
      const schema = op.requestBody?.content?.['application/json']?.schema;
      expect(schema, path).toBeDefined();
      // multiLimit takes a top-level array of limit requests (as Unkey's SDK sends it).
      expect(schema?.type, path).toBe(/multiLimit$/.test(path) ? 'array' : 'object');
      expect(op.security?.some((s) => Object.keys(s).some((k) => bearer.includes(k))), path).toBe(true);
      expect(op.responses?.['200'], path).toBeDefined();
    }
  });

  it('request schemas are the ones the server validates with', async () => {
    const d = await doc();
    for (const route of ROUTES) {
      const schema = d.paths[`/v2/${route.procedure}`]?.post?.requestBody?.content?.['application/json']?.schema;
      expect(schema, route.procedure).toEqual(JSON.parse(JSON.stringify(route.request)));
    }
  });

  it('every listed path is actually served (no 404 for any documented procedure)', async () => {
    for (const path of procedurePaths((await doc()).paths)) {
      const res = await call(srv(), path.slice('/v2/'.length), {});
      expect(res.status, path).toBeLessThan(500);
      expect(String(res.json?.error?.type ?? ''), path).not.toMatch(/procedure_not_found$/);
    }
  });

  it('the GET pages are documented with the content they answer, and liveness matches its schema', async () => {
    const d = await doc();
    for (const path of ['/v2/liveness', '/metrics', '/openapi.json']) {
      const documented = d.paths[path]?.get?.responses?.['200'] as { content?: Record<string, { schema?: Record<string, unknown> }> } | undefined;
      const res = await get(srv(), path);
      expect(res.status, path).toBe(200);
      const type = String(res.headers.get('content-type')).split(';')[0] ?? '';
      expect(Object.keys(documented?.content ?? {}), path).toEqual([type]);
    }
    const schema = (d.paths['/v2/liveness']?.get?.responses?.['200'] as { content: Record<string, { schema: Record<string, unknown> }> }).content['application/json']?.schema;
    const validate = new Ajv2020({ strict: false }).compile(schema ?? false);
    expect(validate((await get(srv(), '/v2/liveness')).json), JSON.stringify(validate.errors)).toBe(true);
  });
});
