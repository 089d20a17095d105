import { describe, expect, it } from '@jest/globals';
import { ApiKeys, presentedKey } from './api-keys.js';
import { selectPool } from './pool-selection.js';

describe('API keys and pool selection', () => {
  const keys = ApiKeys.parse('key1=poola+poolb,key2=*');

  it('grants what ENGRAM_API_KEYS says, and nothing to unknown or missing keys', () => {
    expect(keys.authenticate('key1')).toEqual({ all: false, pools: ['poola', 'poolb'] });
    expect(keys.authenticate('key2')).toEqual({ all: true });
    expect(keys.authenticate('key3')).toBeNull();
    expect(keys.authenticate('key')).toBeNull();
    expect(keys.authenticate(undefined)).toBeNull();
  });

  it('is open when no keys are configured', () => {
    expect(ApiKeys.parse(undefined).authenticate(undefined)).toEqual({ all: true });
    expect(ApiKeys.parse(undefined).open).toBe(true);
  });

  it('rejects a malformed key list at start', () => {
    expect(() => ApiKeys.parse('justakey')).toThrow(/ENGRAM_API_KEYS entry 1/);
    expect(() => ApiKeys.parse('k=../etc')).toThrow(/invalid pool/);
  });

  it('reads a bearer or an x-api-key', () => {
    expect(presentedKey('Bearer abc', undefined)).toBe('abc');
    expect(presentedKey(undefined, 'xyz')).toBe('xyz');
    expect(presentedKey('Basic zzz', undefined)).toBeUndefined();
  });

  it('picks the pool by path, then header, then the key, then default', () => {
    const granted = ApiKeys.parse('k=team+other').authenticate('k');
    if (!granted) throw new Error('no grant');
    expect(selectPool({ pathPool: 'other', headerPool: 'team' }, granted)).toEqual({ pool: 'other' });
    expect(selectPool({ headerPool: 'other' }, granted)).toEqual({ pool: 'other' });
    expect(selectPool({}, granted)).toEqual({ pool: 'team' });
    expect(selectPool({}, { all: true })).toEqual({ pool: 'default' });
  });

  it('answers 400 for a malformed name and 403 for a pool not granted', () => {
    const granted = ApiKeys.parse('k=team').authenticate('k');
    if (!granted) throw new Error('no grant');
    expect(selectPool({ pathPool: '../x' }, granted).error?.status).toBe(400);
    expect(selectPool({ headerPool: 'UPPER' }, { all: true }).error?.status).toBe(400);
    expect(selectPool({ pathPool: 'elsewhere' }, granted).error?.status).toBe(403);
    expect(selectPool({}, ApiKeys.parse('k=team').authenticate('k') ?? { all: true })).toEqual({ pool: 'team' });
  });
});
