import { describe, expect, it } from '@jest/globals';
import { repeatableAfterBrokenCall, transportFailureOf } from './memory-failover.js';
import { MemoryPattern } from './memory-pattern.js';

describe('repeatableAfterBrokenCall: what may go to another replica after its connection broke with the call on it', () => {
  it('lets reads go again', () => {
    for (const pattern of [MemoryPattern.Search, MemoryPattern.List, MemoryPattern.Get, MemoryPattern.Tier1, MemoryPattern.Ping, MemoryPattern.Events]) {
      expect(repeatableAfterBrokenCall(pattern, { pool: 'work' })).toBe(true);
    }
  });

  it('lets a store go again only with its own id or an idempotency key', () => {
    const store = { pool: 'work', actor: 'user', content: 'deploys on fridays are frozen' };
    expect(repeatableAfterBrokenCall(MemoryPattern.Store, store)).toBe(false);
    expect(repeatableAfterBrokenCall(MemoryPattern.Store, { ...store, idempotencyKey: '' })).toBe(false);
    expect(repeatableAfterBrokenCall(MemoryPattern.Store, { ...store, idempotencyKey: 'tool-call:ab12' })).toBe(true);
    expect(repeatableAfterBrokenCall(MemoryPattern.Store, { ...store, id: 'x-exchange-1-0' })).toBe(true);
  });

  it('keeps every other write on the replica it was sent to', () => {
    for (const pattern of [
      MemoryPattern.Update,
      MemoryPattern.Delete,
      MemoryPattern.Purge,
      MemoryPattern.Archive,
      MemoryPattern.Restore,
      MemoryPattern.Confirm,
      MemoryPattern.Categorize,
      MemoryPattern.Refresh,
      MemoryPattern.Consolidate,
      MemoryPattern.DecaySweep,
    ]) {
      expect(repeatableAfterBrokenCall(pattern, { pool: 'work', id: 'abcd', actor: 'user' })).toBe(false);
    }
  });
});

describe('transportFailureOf', () => {
  const errno = (code: string, message: string): Error => Object.assign(new Error(message), { code });

  it('tells a connection never made from one that broke with the call on it', () => {
    expect(transportFailureOf(errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:4001'))).toBe('not-sent');
    expect(transportFailureOf(errno('ENOTFOUND', 'getaddrinfo ENOTFOUND memory-2'))).toBe('not-sent');
    expect(transportFailureOf(errno('EAI_AGAIN', 'getaddrinfo EAI_AGAIN memory-2'))).toBe('not-sent');
    expect(transportFailureOf(new Error('Connection closed'))).toBe('broken');
    expect(transportFailureOf(errno('ECONNRESET', 'read ECONNRESET'))).toBe('broken');
    expect(transportFailureOf(new Error('Unexpected token } in JSON'))).toBeNull();
  });
});
