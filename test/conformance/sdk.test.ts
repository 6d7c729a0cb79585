// The official SDK (@unkey/api 2.x) against a live keyward with only serverURL changed.
// Each row of CALLS is one SDK call: add a row as procedures land. A row's `run` gets the SDK
// client and a shared state (ids made by earlier rows) and returns the SDK's result; any
// SDK-side validation error (ResponseValidationError, SDKValidationError) fails the row.
import { Unkey } from '@unkey/api';
import * as errors from '@unkey/api/models/errors';
import { describe, expect, it } from 'vitest';
import { liveServer } from '../helpers/live.js';
import { randomRootKey, rootKeyWith } from '../helpers/server.js';

const srv = liveServer();

function sdk(rootKey = srv().rootKey): Unkey {
  // No retries: a 5xx must surface, not be replayed.
  return new Unkey({ serverURL: srv().url, rootKey, retryConfig: { strategy: 'none' } });
}

interface State {
  apiId?: string;
  apiName?: string;
}

interface SdkCall {
  name: string;
  run(unkey: Unkey, state: State): Promise<unknown>;
  check(result: unknown, state: State): void;
}

const need = <T>(v: T | undefined, what: string): T => {
  if (v === undefined) throw new Error(`${what} missing: an earlier row failed`);
  return v;
};

const CALLS: SdkCall[] = [
  {
    name: 'apis.createApi',
    run: (u, s) => u.apis.createApi({ name: (s.apiName = 'sdk-api') }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['apis']['createApi']>>;
      expect(res.meta.requestId).toMatch(/^req_/);
      expect(res.data.apiId).toMatch(/^api_/);
      s.apiId = res.data.apiId;
    },
  },
  {
    name: 'apis.getApi',
    run: (u, s) => u.apis.getApi({ apiId: need(s.apiId, 'apiId') }),
    check: (r, s) => {
      const res = r as Awaited<ReturnType<Unkey['apis']['getApi']>>;
      expect(res.data).toMatchObject({ id: s.apiId, name: s.apiName });
    },
  },
  {
    name: 'apis.listKeys (first page)',
    run: (u, s) => u.apis.listKeys({ apiId: need(s.apiId, 'apiId') }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['apis']['listKeys']>>;
      expect(res.result.data).toEqual([]);
      expect(res.result.pagination?.hasMore).toBe(false);
    },
  },
  {
    name: 'apis.listKeys (iterating every page)',
    run: async (u, s) => {
      const pages: unknown[] = [];
      for await (const page of await u.apis.listKeys({ apiId: need(s.apiId, 'apiId'), limit: 1 })) {
        pages.push(page.result);
        if (pages.length > 50) throw new Error('the iterator does not stop');
      }
      return pages;
    },
    check: (r) => {
      const pages = r as { data: unknown[]; pagination?: { hasMore: boolean } }[];
      expect(pages).toHaveLength(1);
      expect(pages[0]?.data).toEqual([]);
    },
  },
  {
    name: 'apis.deleteApi',
    run: (u, s) => u.apis.deleteApi({ apiId: need(s.apiId, 'apiId') }),
    check: (r) => {
      const res = r as Awaited<ReturnType<Unkey['apis']['deleteApi']>>;
      expect(res.meta.requestId).toMatch(/^req_/);
      expect(res.data).toEqual({});
    },
  },
];

describe('@unkey/api against keyward', () => {
  const state: State = {};
  for (const row of CALLS) {
    it(`${row.name} works through the SDK`, async () => {
      let result: unknown;
      try {
        result = await row.run(sdk(), state);
      } catch (err) {
        const e = err as Error & { body?: string; statusCode?: number; cause?: unknown };
        throw new Error(`${row.name}: ${e.name}: ${e.message}${e.body ? `\nbody: ${e.body.slice(0, 500)}` : ''}${e.cause ? `\ncause: ${String(e.cause)}` : ''}`);
      }
      row.check(result, state);
    });
  }

  it('a deleted API surfaces as the typed NotFoundErrorResponse', async () => {
    const unkey = sdk();
    const { data } = await unkey.apis.createApi({ name: 'sdk-gone' });
    await unkey.apis.deleteApi({ apiId: data.apiId });
    const err = await unkey.apis.getApi({ apiId: data.apiId }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.NotFoundErrorResponse);
    expect((err as errors.NotFoundErrorResponse).data$.error.status).toBe(404);
  });

  it('a bad root key surfaces as the typed UnauthorizedErrorResponse (an UnkeyError)', async () => {
    const err = await sdk(randomRootKey()).apis.createApi({ name: 'never' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.UnauthorizedErrorResponse);
    expect(err).toBeInstanceOf(errors.UnkeyError);
    const typed = err as errors.UnauthorizedErrorResponse;
    expect(typed.statusCode).toBe(401);
    expect(typed.data$.meta.requestId).toMatch(/^req_/);
    expect(typed.data$.error.status).toBe(401);
  });

  it('a schema violation surfaces as the typed BadRequestErrorResponse with errors[]', async () => {
    // The SDK does not check lengths; the server does.
    const err = await sdk().apis.createApi({ name: 'ab' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.BadRequestErrorResponse);
    const typed = err as errors.BadRequestErrorResponse;
    expect(typed.data$.error.errors.length).toBeGreaterThan(0);
  });

  it('a missing permission surfaces as the typed ForbiddenErrorResponse', async () => {
    const { key } = await rootKeyWith(srv(), ['apis.*.read_api']);
    const err = await sdk(key).apis.createApi({ name: 'forbidden' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(errors.ForbiddenErrorResponse);
    expect((err as errors.ForbiddenErrorResponse).data$.error.detail).toContain('apis.*.create_api');
  });
});
