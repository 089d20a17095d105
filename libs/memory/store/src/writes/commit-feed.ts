import type { Logger } from 'pino';
import type { MemoryEvent } from '@engram/domain';

export type CommitReader = (events: readonly MemoryEvent[]) => void;

/**
 * Every committed batch, in seq order, once it is durable and applied to the database: written by
 * the write pipeline, read by whoever follows commits (the app's outbox, the vector store). Created
 * at wiring time (see openMemoryService) and handed to its readers, so nothing calls back up into
 * the service. A reader runs synchronously, before the writers of the batch are answered; one that
 * throws is logged and neither stops the others nor fails the write (the batch is already durable).
 */
export class CommitFeed {
  private readonly readers = new Set<CommitReader>();

  constructor(private readonly logger: Pick<Logger, 'error'>) {}

  /** Reads every batch committed from now on; returns a function that stops reading. */
  subscribe(reader: CommitReader): () => void {
    this.readers.add(reader);
    return () => this.readers.delete(reader);
  }

  publish(events: readonly MemoryEvent[]): void {
    for (const reader of this.readers) {
      try {
        reader(events);
      } catch (error) {
        this.logger.error({ err: error }, 'a commit feed reader failed');
      }
    }
  }
}
