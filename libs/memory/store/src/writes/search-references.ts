import type { Logger } from 'pino';
import { decideRecordReferences } from '@engram/domain';
import { decidingAgain } from './deciding-again.js';
import { newEventId } from './ids.js';
import type { MemoryQueries } from '../projection/memory-queries.js';
import { ReferenceBatcher } from './reference-batcher.js';
import type { WritePipeline } from './write-pipeline.js';

export interface SearchReferencesDeps {
  readonly queries: Pick<MemoryQueries, 'idsOfPool'>;
  readonly pipeline: Pick<WritePipeline, 'write'>;
  readonly clock: () => Date;
  readonly logger: Logger;
  /** Writes are refused now (the data disk is full): a batch of references is dropped rather than refused again. */
  readonly writesRefused: () => boolean;
}

/**
 * What searches returned, recorded as memory.referenced: collected in the background (see
 * ReferenceBatcher), decided in the domain against the pool as it is when written, and written
 * through the pipeline like any other write. While the data disk is full they are dropped (a search
 * then counts for nothing in decay), not written and refused each second with an error in the log.
 */
export function searchReferences(deps: SearchReferencesDeps): ReferenceBatcher {
  return new ReferenceBatcher(async (groups) => {
    if (deps.writesRefused()) {
      deps.logger.debug({ groups: groups.length }, 'references of searches not recorded: memory takes no writes while its data disk is full');
      return;
    }
    await decidingAgain(async () => {
      const at = deps.clock().toISOString();
      const events = groups.flatMap((group) => {
        // The search read these from the pool a moment ago; only a purge since can have removed one.
        const inPool = new Set(deps.queries.idsOfPool(group.pool, group.ids));
        return decideRecordReferences({ context: { ...group, at, newEventId }, ids: group.ids }, inPool);
      });
      if (events.length > 0) await deps.pipeline.write(events);
    });
  }, deps.logger);
}
