import type { EventsAfterRequest, EventsPage, EventsRequest } from '@engram/contracts';
import type { MemoryEvent } from '@engram/domain';
import { decodeEventCursor, encodeEventCursor } from './event-cursor.js';
import type { EventIndex } from '../projection/event-index.js';
import type { EventStore } from '../event-log/event-store.js';
import { invalid, validId, validLimit, validPool } from '../writes/validation.js';

const EVENTS_DEFAULT_LIMIT = 100;
const EVENTS_MAX_LIMIT = 1000;

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

  page(request: EventsRequest): EventsPage {
    const pool = validPool(request.pool);
    const after = request.cursor === undefined || request.cursor === null ? validAfter(request.after ?? 0) : decodeEventCursor(request.cursor);
    const limit = validLimit(request.limit, EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT);
    const memoryId = request.memoryId === undefined || request.memoryId === null ? undefined : validId(request.memoryId, 'memoryId');
    const seqs = this.deps.index.seqs({ pool, after, limit: limit + 1, ...(memoryId === undefined ? {} : { memoryId }) });
    const more = seqs.length > limit;
    const data = this.deps.log.readSeqs(more ? seqs.slice(0, limit) : seqs);
    return { data, nextCursor: more ? encodeEventCursor(data.at(-1)?.seq ?? after) : null };
  }

  /** The outbox's and maintenance's read: every event in order, or one pool's through the index. */
  after(request: EventsAfterRequest): MemoryEvent[] {
    const after = validAfter(request.after);
    const limit = validLimit(request.limit, EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT);
    if (request.pool === undefined) return this.deps.log.read(after, limit);
    return this.deps.log.readSeqs(this.deps.index.seqs({ pool: validPool(request.pool), after, limit }));
  }
}

function validAfter(after: unknown): number {
  if (typeof after !== 'number' || !Number.isInteger(after) || after < 0) throw invalid('after must be a non-negative integer');
  return after;
}
