// The analytics procedures (analytics.getVerifications, analytics.getRatelimits) with
// analytics off (KEYWARD_ANALYTICS=off): once the body and the root key's read_analytics
// grant pass, both are 412 analytics_not_configured (the SDK's typed PreconditionFailed error
// where it declares one). With analytics on: test/analytics/.
import { Unkey } from '@unkey/api';
import * as errors from '@unkey/api/models/errors';
import { describe, expect, it } from 'vitest';
import { expect403 } from '../../helpers/keys.js';
import { liveServer } from '../../helpers/live.js';
import { call, expectError, rootKeyWith } from '../../helpers/server.js';

const srv = liveServer({ env: { KEYWARD_ANALYTICS: 'off' } });
const QUERY = 'SELECT COUNT(*) FROM key_verifications_v1';

describe('analytics', () => {
  it.each(['analytics.getVerifications', 'analytics.getRatelimits'])('%s → 412 analytics_not_configured', async (procedure) => {
    const error = expectError(await call(srv(), procedure, { query: QUERY }), 412, 'analytics_not_configured');
    expect(error.detail).toMatch(/KEYWARD_ANALYTICS=off/);
  });

  it.each(['analytics.getVerifications', 'analytics.getRatelimits'])('%s checks its body first (400)', async (procedure) => {
    for (const body of [{}, { query: '' }, { query: QUERY, range: 1 }]) expectError(await call(srv(), procedure, body), 400, 'invalid_input');
  });

  it('needs read_analytics, per API or per namespace (403 otherwise)', async () => {
    const without = await rootKeyWith(srv(), ['apis.*.verify_key', 'ratelimits.*.limit']);
    expect403(await call(srv(), 'analytics.getVerifications', { query: QUERY }, { rootKey: without.key }), 'apis.*.read_analytics');
    expect403(await call(srv(), 'analytics.getRatelimits', { query: QUERY }, { rootKey: without.key }), 'ratelimits.*.read_analytics');
    const scoped = await rootKeyWith(srv(), ['api.api_someapi.read_analytics', 'ratelimit.rlns_somens.read_analytics']);
    for (const procedure of ['analytics.getVerifications', 'analytics.getRatelimits']) {
      expectError(await call(srv(), procedure, { query: QUERY }, { rootKey: scoped.key }), 412, 'analytics_not_configured');
    }
  });

  it('through the SDK: getRatelimits raises its typed 412 error, getVerifications (no 412 declared) an APIError with status 412', async () => {
    const unkey = new Unkey({ serverURL: srv().url, rootKey: srv().rootKey, retryConfig: { strategy: 'none' } });
    await expect(unkey.analytics.getRatelimits({ query: QUERY })).rejects.toBeInstanceOf(errors.PreconditionFailedErrorResponse);
    const err = await unkey.analytics.getVerifications({ query: QUERY }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.APIError);
    expect((err as errors.APIError).statusCode).toBe(412);
  });
});
