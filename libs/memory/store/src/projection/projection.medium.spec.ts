import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { CATEGORIES, EVENT_SCHEMA_VERSION, type MemoryEvent } from '@engram/domain';
import { Projection } from './projection.js';
import { storedEvent as stored } from '@engram/testing';
import { tempDataDir } from '@engram/testing';

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

const search = (projection: Projection, word: string) =>
  projection.queries.search({ pool: 'p', terms: [word], includeArchived: false, limit: 10, now: new Date() }).map((hit) => hit.entry.id);

describe('projection', () => {
  it('applies each event once, however often it is given, across the gaps of a compacted log', () => {
    const projection = Projection.open(join(dir.path, 'engram.db'));
    projection.apply([stored(1, { content: 'one' }), stored(2, { content: 'two' })]);
    projection.apply([stored(1, { content: 'one' }), stored(2, { content: 'two' }), stored(3, { content: 'three' })]);
    expect(projection.lastSeq).toBe(3);
    expect(projection.queries.activeCount('p')).toBe(3);
    // A gap is what a compacted log has (seq 4 was a reference summed into a later event).
    projection.apply([stored(5, { content: 'five' })]);
    projection.apply([stored(5, { content: 'five' })]);
    expect(projection.lastSeq).toBe(5);
    expect(projection.queries.activeCount('p')).toBe(4);
    projection.close();
  });

  it('finishes an interrupted bulk fill by indexing every row on the next open', () => {
    const path = join(dir.path, 'engram.db');
    const filling = Projection.open(path);
    filling.fullText.suspend();
    filling.apply([stored(1, { content: 'zebra crossing' })]);
    filling.close(); // as if the process died before fullText.rebuild
    const reopened = Projection.open(path);
    expect(search(reopened, 'zebra')).toHaveLength(1);
    reopened.apply([stored(2, { content: 'zebra again' })]);
    expect(search(reopened, 'zebra')).toHaveLength(2);
    reopened.fullText.check();
    reopened.close();
  });

  it('returns the best matches by score, whatever the limit', () => {
    const projection = Projection.open(join(dir.path, 'engram.db'));
    const meta = { pool: 'p', actor: 'user', causationId: null, schemaVersion: EVENT_SCHEMA_VERSION } as const;
    const events: MemoryEvent[] = [];
    for (let i = 0; i < 40; i++) {
      const at = new Date(Date.UTC(2026, 0, 1 + (i % 9))).toISOString();
      const content = `${'deploy '.repeat(1 + (i % 3))}with docker ${'word '.repeat(i % 5)}`;
      const category = i % 7 === 0 ? null : (CATEGORIES[i % CATEGORIES.length] ?? null);
      const data = { id: `m${i}`, type: 'MEMORY' as const, category, content, confidence: 0.3 + (i % 8) / 10, source: 'user' as const };
      events.push({ ...meta, seq: events.length + 1, id: `s${i}`, at, type: 'memory.stored', data });
      if (i % 4 === 0) {
        const referencedAt = new Date(Date.UTC(2026, 0, 20 + (i % 5))).toISOString();
        events.push({ ...meta, seq: events.length + 1, id: `r${i}`, at: referencedAt, type: 'memory.referenced', data: { ids: [`m${i}`] } });
      }
    }
    projection.apply(events);
    const query = { pool: 'p', terms: ['deploy', 'docker'], includeArchived: false, now: new Date('2026-02-01T00:00:00.000Z') };
    const all = projection.queries.search({ ...query, limit: 100 });
    expect(all).toHaveLength(40);
    expect(all.map((hit) => hit.score)).toEqual(all.map((hit) => hit.score).sort((a, b) => b - a));
    for (const limit of [1, 3, 10]) {
      expect(projection.queries.search({ ...query, limit })).toEqual(all.slice(0, limit));
    }
    projection.close();
  });
});
