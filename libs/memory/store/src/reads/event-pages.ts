import type { EventsPage, MemoryPattern, ParsedRequest } from '@engram/contracts';
import type { MemoryEvent } from '@engram/domain';
import { decodeEventCursor, encodeEventCursor } from './event-cursor.js';
import type { EventIndex } from '../projection/event-index.js';
import type { EventStore } from '../event-log/event-store.js';

export interface EventPagesDeps {
  readonly log: Pick<EventStore, 'read' | 'readSeqs'>;
  readonly index: Pick<EventIndex, 'seqs'>;
}

/**
 * Event reads. A pool's (or one entry's) events come from the index, then from the log at their
 * offsets, so a read costs what it returns: a read of a quiet pool in a large log no longer walks the
 * whole log on the thread that also commits writes.
 */
export class EventPages {
  constructor(private readonly deps: EventPagesDeps) {}

  page(request: ParsedRequest<typeof MemoryPattern.Events>): EventsPage {
    const { pool, limit, memoryId } = request;
    const after = request.cursor === undefined || request.cursor === null ? request.after : decodeEventCursor(request.cursor);
    const seqs = this.deps.index.seqs({ pool, after, limit: limit + 1, ...(memoryId === undefined ? {} : { memoryId }) });
    const more = seqs.length > limit;
    const data = this.deps.log.readSeqs(more ? seqs.slice(0, limit) : seqs);
    return { data, nextCursor: more ? encodeEventCursor(data.at(-1)?.seq ?? after) : null };
  }

  /** The outbox's and maintenance's read: every event in order, or one pool's through the index. */
  after(request: ParsedRequest<typeof MemoryPattern.EventsAfter>): MemoryEvent[] {
    const { pool, after, limit } = request;
    if (pool === undefined) return this.deps.log.read(after, limit);
    return this.deps.log.readSeqs(this.deps.index.seqs({ pool, after, limit }));
  }
}
