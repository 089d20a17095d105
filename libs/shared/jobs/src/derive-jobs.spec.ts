import type { MemoryEvent } from '@engram/domain';
import { describe, expect, it } from '@jest/globals';
import { storedEvent } from '@engram/testing';
import { deriveBatchJobs, deriveJobs } from './derive-jobs.js';
import { JobName } from './queue-name.js';

const stored = (category: 'project' | null, seq = 7, pool = 'team'): MemoryEvent =>
  storedEvent(
    seq,
    { id: 'm1', category, content: 'uses pnpm', source: 'llm' },
    { id: `ev-${seq}`, pool, actor: 'llm', at: '2026-12-01T10:00:00.000Z' },
  );

describe('deriveJobs', () => {
  const small = { activeCount: () => 3, consolidationThreshold: 20 };

  it('asks for categorization of an entry stored without a category', () => {
    expect(deriveJobs(stored(null), small)).toEqual([{ name: JobName.CategorizeEntry, data: { pool: 'team', memoryId: 'm1', eventId: 'ev-7' } }]);
  });

  it('asks for nothing when the entry already has a category and the pool is small', () => {
    expect(deriveJobs(stored('project'), small)).toEqual([]);
  });

  it('asks for consolidation once the pool passes the threshold', () => {
    const jobs = deriveJobs(stored('project'), { activeCount: () => 21, consolidationThreshold: 20 });
    expect(jobs).toEqual([{ name: JobName.ConsolidatePool, data: { pool: 'team', seq: 7, eventId: 'ev-7' } }]);
  });

  it('derives the same jobs when an event is re-driven', () => {
    expect(deriveJobs(stored(null), small)).toEqual(deriveJobs(stored(null), small));
  });
});

describe('deriveBatchJobs', () => {
  const large = { activeCount: () => 21, consolidationThreshold: 20 };

  it('asks once per pool for consolidation, on the last stored event of the batch', () => {
    const events = [stored(null, 1), stored(null, 2, 'home'), stored(null, 3), stored(null, 4, 'home'), stored(null, 5)];
    const consolidations = deriveBatchJobs(events, large).filter((job) => job.name === JobName.ConsolidatePool);
    expect(consolidations).toEqual([
      { name: JobName.ConsolidatePool, data: { pool: 'home', seq: 4, eventId: 'ev-4' } },
      { name: JobName.ConsolidatePool, data: { pool: 'team', seq: 5, eventId: 'ev-5' } },
    ]);
  });

  it('keeps every categorization, in the order of the events', () => {
    const events = [stored(null, 1), stored(null, 2, 'home'), stored(null, 3)];
    const categorized = deriveBatchJobs(events, large).flatMap((job) => (job.name === JobName.CategorizeEntry ? [job.data.eventId] : []));
    expect(categorized).toEqual(['ev-1', 'ev-2', 'ev-3']);
  });
});

describe('embedding jobs', () => {
  const hybrid = { activeCount: () => 3, consolidationThreshold: 20, embeddings: true };

  it('asks nothing when hybrid search is off', () => {
    expect(deriveJobs(stored('project'), { activeCount: () => 3, consolidationThreshold: 20 })).toEqual([]);
  });

  it('asks once per pool and batch for the embedding of new text', () => {
    const events = [stored('project', 1), stored('project', 2, 'home'), stored('project', 3)];
    const embeds = deriveBatchJobs(events, hybrid).filter((job) => job.name === JobName.EmbedPool);
    expect(embeds).toEqual([
      { name: JobName.EmbedPool, data: { pool: 'home', eventId: 'ev-2' } },
      { name: JobName.EmbedPool, data: { pool: 'team', eventId: 'ev-3' } },
    ]);
  });
});
