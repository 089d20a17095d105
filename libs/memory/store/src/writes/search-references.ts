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
}

/**
 * What searches returned, recorded as memory.referenced: collected in the background (see
 * ReferenceBatcher), decided in the domain against the pool as it is when written, and written
 * through the pipeline like any other write.
 */
export function searchReferences(deps: SearchReferencesDeps): ReferenceBatcher {
  return new ReferenceBatcher(
    (groups) =>
      decidingAgain(async () => {
        const at = deps.clock().toISOString();
        const events = groups.flatMap((group) => {
          // The search read these from the pool a moment ago; only a purge since can have removed one.
          const inPool = new Set(deps.queries.idsOfPool(group.pool, group.ids));
          return decideRecordReferences({ context: { ...group, at, newEventId }, ids: group.ids }, inPool);
        });
        if (events.length > 0) await deps.pipeline.write(events);
      }),
    deps.logger,
  );
}
