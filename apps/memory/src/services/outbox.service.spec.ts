import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { loadConfig } from '@engram/config';
import type { MemoryEvent } from '@engram/domain';
import { JobName, type JobItem } from '@engram/jobs';
import { CommitFeed, type MemoryService } from '@engram/memory-store';
import { recordingLogger, storedEvent } from '@engram/testing';
import type { ChangePublisherRepository } from '../repositories/change-publisher.repository.js';
import type { JobQueueRepository } from '../repositories/job-queue.repository.js';
import { OutboxService } from './outbox.service.js';

type OutboxStore = Pick<MemoryService, 'eventsAfter' | 'dispatchedSeq' | 'markDispatched' | 'activeCount'>;

/** The log and its dispatch cursor, as the outbox reads them; `commit` plays a write reaching the log (and the commit feed). */
class FakeStore implements OutboxStore {
  readonly log: MemoryEvent[] = [];
  readonly commits = new CommitFeed(recordingLogger().logger);
  cursor = 0;

  async eventsAfter({ after, limit }: { after: number; limit?: number }): Promise<MemoryEvent[]> {
    return this.log.filter((event) => event.seq > after).slice(0, limit);
  }
  dispatchedSeq(): number {
    return this.cursor;
  }
  markDispatched(seq: number): void {
    this.cursor = seq;
  }
  activeCount(): number {
    return 3;
  }
  commit(...events: MemoryEvent[]): void {
    this.log.push(...events);
    this.commits.publish(events);
  }
}

class FakeQueues implements Pick<JobQueueRepository, 'enqueue'> {
  readonly accepted: JobItem[] = [];
  redisUp = true;

  async enqueue(items: readonly JobItem[]): Promise<void> {
    if (!this.redisUp) throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
    this.accepted.push(...items);
  }
}

class FakeChanges implements Pick<ChangePublisherRepository, 'publish'> {
  readonly published: MemoryEvent[][] = [];
  publish(events: readonly MemoryEvent[]): void {
    this.published.push([...events]);
  }
}

function newOutbox() {
  const store = new FakeStore();
  const queues = new FakeQueues();
  const changes = new FakeChanges();
  const { logger, lines } = recordingLogger();
  // The service takes the concrete classes Nest injects; it uses only what the fakes implement.
  const outbox = new OutboxService(
    store as unknown as MemoryService,
    store.commits,
    queues as unknown as JobQueueRepository,
    changes as unknown as ChangePublisherRepository,
    loadConfig({}),
    logger,
  );
  return { outbox, store, queues, changes, lines };
}

/** Lets the outbox's background drain run to its end: every fake answers at once, nothing waits on a timer. */
const settled = () => jest.advanceTimersByTimeAsync(0);

const categorizations = (jobs: JobItem[]) => jobs.flatMap((job) => (job.name === JobName.CategorizeEntry ? [job.data.memoryId] : []));

describe('OutboxService', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('at start, dispatches what the log holds past the cursor', async () => {
    const { outbox, store, queues } = newOutbox();
    store.log.push(storedEvent(1), storedEvent(2), storedEvent(3));
    store.cursor = 1;
    outbox.onApplicationBootstrap();
    await settled();
    expect(categorizations(queues.accepted)).toEqual(['m2', 'm3']);
    expect(store.cursor).toBe(3);
  });

  it('announces each commit and turns it into jobs, moving the cursor past it', async () => {
    const { outbox, store, queues, changes } = newOutbox();
    outbox.onApplicationBootstrap();
    store.commit(storedEvent(1), storedEvent(2, { category: 'preference' }));
    await settled();
    expect(changes.published).toEqual([[expect.objectContaining({ seq: 1 }), expect.objectContaining({ seq: 2 })]]);
    expect(categorizations(queues.accepted)).toEqual(['m1']);
    expect(store.cursor).toBe(2);
  });

  it('keeps the cursor while Redis refuses jobs, retries, and loses none', async () => {
    const { outbox, store, queues, lines } = newOutbox();
    outbox.onApplicationBootstrap();
    queues.redisUp = false;
    store.commit(storedEvent(1));
    await settled();
    store.commit(storedEvent(2));
    await settled();
    expect(store.cursor).toBe(0);
    expect(lines.filter((line) => line.msg.startsWith('job dispatch failed'))).toHaveLength(1);

    queues.redisUp = true;
    await jest.advanceTimersByTimeAsync(1_000);
    expect(categorizations(queues.accepted)).toEqual(['m1', 'm2']);
    expect(store.cursor).toBe(2);
    expect(lines.filter((line) => line.msg === 'job dispatch resumed')).toHaveLength(1);
    outbox.onModuleDestroy();
  });
});
