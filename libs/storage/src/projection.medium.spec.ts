import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_SCHEMA_VERSION, type MemoryEvent } from '@engram/domain';
import { Projection } from './projection.js';
import { julianDay } from './search-score.js';
import { tempDataDir } from './testing/temp-data-dir.js';

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

const stored = (seq: number, content: string): MemoryEvent => ({
  seq,
  type: 'memory.stored',
  id: `e${seq}`,
  at: '2026-01-01T00:00:00.000Z',
  pool: 'p',
  actor: 'user',
  causationId: null,
  schemaVersion: EVENT_SCHEMA_VERSION,
  data: { id: `m${seq}`, type: 'MEMORY', category: null, content, confidence: 1, source: 'user' },
});
const search = (projection: Projection, word: string) =>
  projection
    .search({ pool: 'p', match: `"${word}"`, includeArchived: false, window: 10, limit: 10, today: julianDay(new Date()) })
    .map((hit) => hit.entry.id);

describe('projection', () => {
  it('applies each event once, however often it is given', () => {
    const projection = Projection.open(join(dir.path, 'engram.db'));
    projection.apply([stored(1, 'one'), stored(2, 'two')]);
    projection.apply([stored(1, 'one'), stored(2, 'two'), stored(3, 'three')]);
    expect(projection.lastSeq).toBe(3);
    expect(projection.activeCount('p')).toBe(3);
    expect(() => projection.apply([stored(5, 'gap')])).toThrow(/events are missing/);
    projection.close();
  });

  it('finishes an interrupted bulk fill by indexing every row on the next open', () => {
    const path = join(dir.path, 'engram.db');
    const filling = Projection.open(path);
    filling.suspendFullText();
    filling.apply([stored(1, 'zebra crossing')]);
    filling.close(); // as if the process died before rebuildFullText
    const reopened = Projection.open(path);
    expect(search(reopened, 'zebra')).toHaveLength(1);
    reopened.apply([stored(2, 'zebra again')]);
    expect(search(reopened, 'zebra')).toHaveLength(2);
    reopened.checkFts();
    reopened.close();
  });
});
