import { Controller, Inject, UseFilters, UseGuards } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { MemoryError, MemoryPattern, type MemoryContract, type MemoryPatternName } from '@engram/contracts';
import type { Logger } from '@engram/observability';
import type { MemoryService } from '@engram/memory-store';
import { LOGGER, MEMORY_SERVICE } from '../memory.tokens.js';
import { ExtractionSpoolService } from '../services/extraction-spool.service.js';
import { PurgeService } from '../services/purge.service.js';
import { InternalTokenGuard } from './internal-token.guard.js';
import { MemoryRpcExceptionFilter } from './rpc-exception.filter.js';

type Request<P extends keyof MemoryContract> = MemoryContract[P][0];
type Response<P extends keyof MemoryContract> = Promise<MemoryContract[P][1]>;

/** Transport only: each pattern goes to the service method of the same name, in the caller's request context. */
@Controller()
@UseFilters(MemoryRpcExceptionFilter)
@UseGuards(InternalTokenGuard)
export class MemoryRpcController {
  constructor(
    @Inject(MEMORY_SERVICE) private readonly memory: MemoryService,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(PurgeService) private readonly purges: PurgeService,
    @Inject(ExtractionSpoolService) private readonly spool: ExtractionSpoolService,
  ) {}

  @MessagePattern(MemoryPattern.VectorsMissing)
  vectorsMissing(@Payload() request: Request<typeof MemoryPattern.VectorsMissing>): Response<typeof MemoryPattern.VectorsMissing> {
    return this.handle(MemoryPattern.VectorsMissing, request, () => this.vectors().missing(request));
  }

  @MessagePattern(MemoryPattern.StoreVectors)
  storeVectors(@Payload() request: Request<typeof MemoryPattern.StoreVectors>): Response<typeof MemoryPattern.StoreVectors> {
    return this.handle(MemoryPattern.StoreVectors, request, () => this.vectors().storeVectors(request));
  }

  @MessagePattern(MemoryPattern.Store)
  store(@Payload() request: Request<typeof MemoryPattern.Store>): Response<typeof MemoryPattern.Store> {
    return this.handle(MemoryPattern.Store, request, () => this.memory.store(request));
  }

  @MessagePattern(MemoryPattern.Search)
  search(@Payload() request: Request<typeof MemoryPattern.Search>): Response<typeof MemoryPattern.Search> {
    return this.handle(MemoryPattern.Search, request, () => this.memory.search(request));
  }

  @MessagePattern(MemoryPattern.List)
  list(@Payload() request: Request<typeof MemoryPattern.List>): Response<typeof MemoryPattern.List> {
    return this.handle(MemoryPattern.List, request, () => this.memory.list(request));
  }

  @MessagePattern(MemoryPattern.Page)
  page(@Payload() request: Request<typeof MemoryPattern.Page>): Response<typeof MemoryPattern.Page> {
    return this.handle(MemoryPattern.Page, request, () => this.memory.page(request));
  }

  @MessagePattern(MemoryPattern.Get)
  get(@Payload() request: Request<typeof MemoryPattern.Get>): Response<typeof MemoryPattern.Get> {
    return this.handle(MemoryPattern.Get, request, () => this.memory.get(request));
  }

  @MessagePattern(MemoryPattern.Update)
  update(@Payload() request: Request<typeof MemoryPattern.Update>): Response<typeof MemoryPattern.Update> {
    return this.handle(MemoryPattern.Update, request, () => this.memory.update(request));
  }

  @MessagePattern(MemoryPattern.Delete)
  delete(@Payload() request: Request<typeof MemoryPattern.Delete>): Response<typeof MemoryPattern.Delete> {
    return this.handle(MemoryPattern.Delete, request, () => this.memory.delete(request));
  }

  @MessagePattern(MemoryPattern.Purge)
  purge(@Payload() request: Request<typeof MemoryPattern.Purge>): Response<typeof MemoryPattern.Purge> {
    return this.handle(MemoryPattern.Purge, request, () => this.purges.purge(request));
  }

  @MessagePattern(MemoryPattern.Refresh)
  refresh(@Payload() request: Request<typeof MemoryPattern.Refresh>): Response<typeof MemoryPattern.Refresh> {
    return this.handle(MemoryPattern.Refresh, request, () => this.memory.refresh(request));
  }

  @MessagePattern(MemoryPattern.Confirm)
  confirm(@Payload() request: Request<typeof MemoryPattern.Confirm>): Response<typeof MemoryPattern.Confirm> {
    return this.handle(MemoryPattern.Confirm, request, () => this.memory.confirm(request));
  }

  @MessagePattern(MemoryPattern.Categorize)
  categorize(@Payload() request: Request<typeof MemoryPattern.Categorize>): Response<typeof MemoryPattern.Categorize> {
    return this.handle(MemoryPattern.Categorize, request, () => this.memory.categorize(request));
  }

  @MessagePattern(MemoryPattern.Archive)
  archive(@Payload() request: Request<typeof MemoryPattern.Archive>): Response<typeof MemoryPattern.Archive> {
    return this.handle(MemoryPattern.Archive, request, () => this.memory.archive(request));
  }

  @MessagePattern(MemoryPattern.Restore)
  restore(@Payload() request: Request<typeof MemoryPattern.Restore>): Response<typeof MemoryPattern.Restore> {
    return this.handle(MemoryPattern.Restore, request, () => this.memory.restore(request));
  }

  @MessagePattern(MemoryPattern.Consolidate)
  consolidate(@Payload() request: Request<typeof MemoryPattern.Consolidate>): Response<typeof MemoryPattern.Consolidate> {
    return this.handle(MemoryPattern.Consolidate, request, () => this.memory.consolidate(request));
  }

  @MessagePattern(MemoryPattern.DecaySweep)
  decaySweep(@Payload() request: Request<typeof MemoryPattern.DecaySweep>): Response<typeof MemoryPattern.DecaySweep> {
    return this.handle(MemoryPattern.DecaySweep, request, () => this.memory.decaySweep(request));
  }

  @MessagePattern(MemoryPattern.Tier1)
  tier1(@Payload() request: Request<typeof MemoryPattern.Tier1>): Response<typeof MemoryPattern.Tier1> {
    return this.handle(MemoryPattern.Tier1, request, () => this.memory.tier1(request));
  }

  @MessagePattern(MemoryPattern.Tier1Plan)
  tier1Plan(@Payload() request: Request<typeof MemoryPattern.Tier1Plan>): Response<typeof MemoryPattern.Tier1Plan> {
    return this.handle(MemoryPattern.Tier1Plan, request, () => this.memory.tier1Plan(request));
  }

  @MessagePattern(MemoryPattern.Stats)
  stats(@Payload() request: Request<typeof MemoryPattern.Stats>): Response<typeof MemoryPattern.Stats> {
    return this.handle(MemoryPattern.Stats, request, () => this.memory.stats(request));
  }

  @MessagePattern(MemoryPattern.EventsAfter)
  eventsAfter(@Payload() request: Request<typeof MemoryPattern.EventsAfter>): Response<typeof MemoryPattern.EventsAfter> {
    return this.handle(MemoryPattern.EventsAfter, request, () => this.memory.eventsAfter(request));
  }

  @MessagePattern(MemoryPattern.Events)
  events(@Payload() request: Request<typeof MemoryPattern.Events>): Response<typeof MemoryPattern.Events> {
    return this.handle(MemoryPattern.Events, request, () => this.memory.events(request));
  }

  @MessagePattern(MemoryPattern.SpoolExtraction)
  spoolExtraction(@Payload() request: Request<typeof MemoryPattern.SpoolExtraction>): Response<typeof MemoryPattern.SpoolExtraction> {
    return this.handle(MemoryPattern.SpoolExtraction, request, () => Promise.resolve(this.spool.put(request)));
  }

  @MessagePattern(MemoryPattern.Ping)
  ping(@Payload() request: Request<typeof MemoryPattern.Ping>): Response<typeof MemoryPattern.Ping> {
    return this.handle(MemoryPattern.Ping, request, () => this.memory.ping(request));
  }

  /**
   * Runs one call and logs it with the caller's request id and pool: writes at info, reads at
   * debug. The id goes into the log line itself, not into an AsyncLocalStorage: on Node 20 the
   * first AsyncLocalStorage.run turns on promise hooks for the whole process, so every promise of
   * every call would pay for this one line (nothing else logs inside a call).
   */
  private vectors(): NonNullable<MemoryService['vectors']> {
    if (!this.memory.vectors)
      throw new MemoryError(
        'unavailable',
        'hybrid search is off on the memory service (neither EMBEDDINGS_BASE_URL nor EMBEDDINGS_MODEL_DIR is set)',
      );
    return this.memory.vectors;
  }

  private async handle<T>(pattern: MemoryPatternName, request: unknown, run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await run();
    const level = READS.has(pattern) ? 'debug' : 'info';
    if (!this.logger.isLevelEnabled(level)) return result;
    const { requestId, pool } = (request ?? {}) as { requestId?: unknown; pool?: unknown };
    this.logger[level](
      {
        pattern,
        ms: Math.round((performance.now() - started) * 10) / 10,
        ...(typeof requestId === 'string' ? { requestId } : {}),
        ...(typeof pool === 'string' ? { pool } : {}),
      },
      pattern,
    );
    return result;
  }
}

const READS: ReadonlySet<MemoryPatternName> = new Set([
  MemoryPattern.Search,
  MemoryPattern.List,
  MemoryPattern.Page,
  MemoryPattern.Tier1Plan,
  MemoryPattern.Get,
  MemoryPattern.Tier1,
  MemoryPattern.Stats,
  MemoryPattern.EventsAfter,
  MemoryPattern.Events,
  MemoryPattern.Ping,
]);
