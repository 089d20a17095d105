import { describe, expect, it } from '@jest/globals';
import { passthroughPath } from './passthrough-path.js';
import { refusalOf } from './testing/refusal.js';

describe('passthroughPath', () => {
  it('keeps a /v1 path and its query as the client sent them, without the pool prefix', () => {
    expect(passthroughPath('/v1/models', undefined)).toBe('/v1/models');
    expect(passthroughPath('/v1/responses/resp_123?include=usage&x=..', undefined)).toBe('/v1/responses/resp_123?include=usage&x=..');
    expect(passthroughPath('/pools/alpha/v1/files/file%20one', 'alpha')).toBe('/v1/files/file%20one');
  });

  it.each([
    ['/v1/../../admin/keys', undefined],
    ['/pools/alpha/v1/../../admin/keys', 'alpha'],
    ['/v1/%2e%2e/%2E%2E/admin/keys', undefined],
    ['/v1/./models', undefined],
    ['/v1/models%2f..%2f..%2fadmin', undefined],
    ['/v1/models/..%5cadmin', undefined],
    ['/v1/models\\..\\admin', undefined],
    ['/v1/%zz', undefined],
    ['/v1/..', undefined],
    ['/admin/keys', undefined],
    ['/pools/beta/v1/models', 'alpha'],
    ['*', undefined],
  ])('refuses %s with a 400', (target, pool) => {
    const refusal = refusalOf(() => passthroughPath(target, pool));
    expect(refusal.status).toBe(400);
    expect(refusal.code).toBe('invalid_path');
  });

  it('resolves an absolute-form target to its path, never to a path holding the scheme', () => {
    expect(passthroughPath('http://x/v1/models', undefined)).toBe('/v1/models');
    expect(passthroughPath('https://evil.example:8443/v1/models?limit=1', undefined)).toBe('/v1/models?limit=1');
    expect(refusalOf(() => passthroughPath('http://x/v1/../admin', undefined)).status).toBe(400);
    expect(refusalOf(() => passthroughPath('http://x', undefined)).status).toBe(400);
  });
});
