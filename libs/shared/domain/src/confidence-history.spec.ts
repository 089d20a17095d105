import { describe, expect, it } from '@jest/globals';
import { confidenceHistory } from './confidence-history.js';
import { ARCHIVE_THRESHOLD } from './decay.js';
import { EVENT_SCHEMA_VERSION, type EventDataByType, type EventType, type MemoryEvent } from './events.js';

let seq = 0;
function event<T extends EventType>(type: T, at: string, data: EventDataByType[T]): MemoryEvent {
  seq += 1;
  return { type, id: `e${seq}`, seq, at, pool: 'p', actor: 'llm', causationId: null, schemaVersion: EVENT_SCHEMA_VERSION, data } as MemoryEvent;
}
const stored = (id: string, at: string, confidence = 1) =>
  event('memory.stored', at, { id, type: 'MEMORY', category: 'project', content: `fact ${id}`, confidence, source: 'llm' });

describe('confidence history', () => {
  it('decays 5% a day from the store, and a reference lifts it back to the stored confidence', () => {
    const events = [stored('a', '2026-03-01T00:00:00.000Z'), event('memory.referenced', '2026-03-11T00:00:00.000Z', { ids: ['a'] })];
    const { points, archiveLine } = confidenceHistory('a', events, new Date('2026-03-21T00:00:00.000Z'), 20);
    expect(archiveLine).toBe(ARCHIVE_THRESHOLD);
    expect(points[0]).toEqual({ at: '2026-03-01T00:00:00.000Z', value: 1 });
    const atReference = points.filter((point) => point.at === '2026-03-11T00:00:00.000Z').map((point) => point.value);
    expect(atReference).toEqual([Math.round(0.95 ** 10 * 1000) / 1000, 1]);
    expect(points.at(-1)).toEqual({ at: '2026-03-21T00:00:00.000Z', value: Math.round(0.95 ** 10 * 1000) / 1000 });
    const times = points.map((point) => point.at);
    expect([...times].sort()).toEqual(times);
  });

  it('ignores other entries and ends where the entry was purged', () => {
    const events = [
      stored('a', '2026-03-01T00:00:00.000Z'),
      stored('b', '2026-03-02T00:00:00.000Z'),
      event('memory.referenced', '2026-03-03T00:00:00.000Z', { ids: ['b'] }),
      event('memory.purged', '2026-03-05T00:00:00.000Z', { id: 'a' }),
    ];
    const { points } = confidenceHistory('a', events, new Date('2026-04-01T00:00:00.000Z'), 8);
    expect(points.at(-1)?.at).toBe('2026-03-05T00:00:00.000Z');
    expect(points.every((point) => point.value <= 1 && point.value >= 0.95 ** 4 - 0.001)).toBe(true);
  });

  it('is empty for an entry the events never stored', () => {
    expect(confidenceHistory('zz', [stored('a', '2026-03-01T00:00:00.000Z')], new Date()).points).toEqual([]);
  });
});
