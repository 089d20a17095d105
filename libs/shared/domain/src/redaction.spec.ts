import { describe, expect, it } from '@jest/globals';
import { EVENT_SCHEMA_VERSION, type MemoryEvent } from './events.js';
import { redacted } from './redaction.js';

const event = <E extends MemoryEvent>(type: E['type'], data: E['data']): MemoryEvent =>
  ({
    type,
    data,
    seq: 1,
    id: 'ev-1',
    at: '2026-01-01T00:00:00.000Z',
    pool: 'p',
    actor: 'user',
    causationId: null,
    schemaVersion: EVENT_SCHEMA_VERSION,
  }) as MemoryEvent;

const purged = new Set(['m1']);
const stored = event('memory.stored', { id: 'm1', type: 'MEMORY', category: null, content: 'secret', confidence: 1, source: 'user' });

describe('what a purge leaves of an event', () => {
  it('empties the content a purged entry was stored, rewritten or consolidated with, and keeps the rest', () => {
    expect(redacted(stored, purged)).toEqual({ ...stored, data: { ...stored.data, content: '' } });
    const updated = event('memory.updated', { id: 'm1', content: 'new secret', category: 'project' });
    expect(redacted(updated, purged)).toEqual({ ...updated, data: { id: 'm1', content: '', category: 'project' } });
    const consolidated = event('memory.consolidated', {
      id: 'm1',
      type: 'MEMORY',
      category: null,
      content: 'merged secret',
      confidence: 1,
      supersedes: ['m2', 'm3'],
      model: 'm',
    });
    expect(redacted(consolidated, purged)?.data).toEqual({ ...consolidated.data, content: '' });
  });

  it('leaves an event alone when it carries no content of a purged entry', () => {
    expect(redacted(stored, new Set(['m2']))).toBeUndefined();
    expect(redacted(event('memory.updated', { id: 'm1', category: 'project' }), purged)).toBeUndefined();
    expect(redacted(redacted(stored, purged) as MemoryEvent, purged)).toBeUndefined();
    expect(redacted(event('memory.referenced', { ids: ['m1'] }), purged)).toBeUndefined();
    expect(redacted(event('memory.purged', { id: 'm1' }), purged)).toBeUndefined();
  });
});
