import { describe, expect, it } from '@jest/globals';
import { ApiKeys } from './api-keys.js';
import { MetricsAccess } from './metrics-access.js';

describe('MetricsAccess', () => {
  const keyed = ApiKeys.parse('ka=alpha,kb=beta');

  it('in keyed mode needs an Engram key: no key, an unknown one, no metrics', () => {
    const access = new MetricsAccess(keyed, undefined);
    expect(access.allows(undefined)).toBe(false);
    expect(access.allows('nope')).toBe(false);
    expect(access.allows('kb')).toBe(true);
  });

  it('takes METRICS_TOKEN besides the Engram keys', () => {
    const access = new MetricsAccess(keyed, 'scrape-secret');
    expect(access.allows('scrape-secret')).toBe(true);
    expect(access.allows('ka')).toBe(true);
    expect(access.allows('scrape-secre')).toBe(false);
    expect(access.allows(undefined)).toBe(false);
  });

  it('in open mode is open, unless METRICS_TOKEN is set', () => {
    const open = ApiKeys.parse(undefined);
    expect(new MetricsAccess(open, undefined).allows(undefined)).toBe(true);
    const guarded = new MetricsAccess(open, 'scrape-secret');
    expect(guarded.allows(undefined)).toBe(false);
    expect(guarded.allows('anything')).toBe(false);
    expect(guarded.allows('scrape-secret')).toBe(true);
  });
});
