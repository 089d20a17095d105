import { describe, expect, it } from '@jest/globals';
import type { JobItem } from './job-item.js';
import { exchangeIdOf } from './exchange-id.js';
import { CONSOLIDATION_WINDOW_MS, decaySchedule, jobOptionsFor, workerOptionsFor } from './job-options.js';
import { JobName, QueueName } from './queue-name.js';

const items: JobItem[] = [
  { name: JobName.CategorizeEntry, data: { pool: 'team:a', memoryId: 'm1', eventId: 'ev:1' } },
  { name: JobName.ConsolidatePool, data: { pool: 'team', seq: 3, eventId: 'ev-3' } },
  { name: JobName.DecaySweep, data: { pool: 'team', asOf: '2026-12-01T10:00:00.000Z' } },
  {
    name: JobName.ExtractExchange,
    data: { pool: 'team', suggestions: [], exchange: { user: '', assistant: '' }, requestId: 'r:1', exchangeId: 'x:1' },
  },
  { name: JobName.EmbedPool, data: { pool: 'team', eventId: 'ev:9' } },
];

describe('jobOptionsFor', () => {
  it('names an extraction job by its exchange: two exchanges under one client request id, in one pool or two, are two jobs; one exchange enqueued twice is one', () => {
    const jobIdOf = (pool: string, suggestion: string) => {
      const exchange = { pool, suggestions: [suggestion], exchange: { user: 'SUGGEST', assistant: 'Sure.' }, requestId: 'same-id' };
      return jobOptionsFor({ name: JobName.ExtractExchange, data: { ...exchange, exchangeId: exchangeIdOf(exchange) } }).jobId;
    };
    const ids = [jobIdOf('xa', 'Likes tea'), jobIdOf('xa', 'Likes coffee'), jobIdOf('xb', 'Likes tea')];
    expect(new Set(ids).size).toBe(3);
    expect(ids.some((id) => id?.includes('same-id'))).toBe(false);
    expect(jobIdOf('xa', 'Likes tea')).toBe(ids[0]);
  });

  it.each(items)('gives $name an id BullMQ accepts (no ":"), retries with backoff and keeps failures', (item) => {
    const options = jobOptionsFor(item);
    expect(options.jobId).toBeDefined();
    expect(options.jobId).not.toContain(':');
    expect(options.attempts).toBeGreaterThan(1);
    expect(options.backoff).toMatchObject({ type: 'exponential' });
    expect(options.removeOnFail).toMatchObject({ age: expect.any(Number) });
  });

  it('derives the same id for the same cause, so a re-enqueued job is one job', () => {
    const first = items[0];
    expect(first && jobOptionsFor(first).jobId).toBe(first && jobOptionsFor({ ...first }).jobId);
  });

  it('does not pin a plain decay sweep to one id (it would be ignored while the last one is kept)', () => {
    expect(jobOptionsFor({ name: JobName.DecaySweep, data: { pool: 'team' } }).jobId).toBeUndefined();
  });

  it('consolidates a pool at most once per window, never twice at once', () => {
    const a = jobOptionsFor({ name: JobName.ConsolidatePool, data: { pool: 'p', seq: 1, eventId: 'e1' } });
    const b = jobOptionsFor({ name: JobName.ConsolidatePool, data: { pool: 'p', seq: 2, eventId: 'e2' } });
    expect(a.deduplication?.id).toBe(b.deduplication?.id);
    expect(a.deduplication?.ttl).toBe(CONSOLIDATION_WINDOW_MS);
    expect(workerOptionsFor(QueueName.Consolidate).concurrency).toBe(1);
  });
});

describe('decaySchedule', () => {
  it('repeats the sweep of every pool at the given period with the registry options', () => {
    const schedule = decaySchedule(3_600_000);
    expect(schedule.repeat).toEqual({ every: 3_600_000 });
    expect(schedule.template).toMatchObject({ name: JobName.DecaySweep, data: {}, opts: { attempts: 3 } });
    expect(schedule.template.opts).not.toHaveProperty('jobId');
  });
});
