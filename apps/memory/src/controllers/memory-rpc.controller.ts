import { Controller, Inject, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { MemoryPattern, type MemoryContract } from '@engram/contracts';
import { requestContext } from '@engram/observability';
import type { MemoryService } from '@engram/storage';
import { MEMORY_SERVICE } from '../memory.tokens.js';
import { MemoryRpcExceptionFilter } from './rpc-exception.filter.js';

type Request<P extends keyof MemoryContract> = MemoryContract[P][0];
type Response<P extends keyof MemoryContract> = Promise<MemoryContract[P][1]>;

/** Transport only: each pattern goes to the service method of the same name, in the caller's request context. */
@Controller()
@UseFilters(MemoryRpcExceptionFilter)
export class MemoryRpcController {
  constructor(@Inject(MEMORY_SERVICE) private readonly memory: MemoryService) {}

  @MessagePattern(MemoryPattern.Store)
  store(@Payload() request: Request<typeof MemoryPattern.Store>): Response<typeof MemoryPattern.Store> {
    return inContext(request, () => this.memory.store(request));
  }

  @MessagePattern(MemoryPattern.Search)
  search(@Payload() request: Request<typeof MemoryPattern.Search>): Response<typeof MemoryPattern.Search> {
    return inContext(request, () => this.memory.search(request));
  }

  @MessagePattern(MemoryPattern.List)
  list(@Payload() request: Request<typeof MemoryPattern.List>): Response<typeof MemoryPattern.List> {
    return inContext(request, () => this.memory.list(request));
  }

  @MessagePattern(MemoryPattern.Get)
  get(@Payload() request: Request<typeof MemoryPattern.Get>): Response<typeof MemoryPattern.Get> {
    return inContext(request, () => this.memory.get(request));
  }

  @MessagePattern(MemoryPattern.Update)
  update(@Payload() request: Request<typeof MemoryPattern.Update>): Response<typeof MemoryPattern.Update> {
    return inContext(request, () => this.memory.update(request));
  }

  @MessagePattern(MemoryPattern.Delete)
  delete(@Payload() request: Request<typeof MemoryPattern.Delete>): Response<typeof MemoryPattern.Delete> {
    return inContext(request, () => this.memory.delete(request));
  }

  @MessagePattern(MemoryPattern.Purge)
  purge(@Payload() request: Request<typeof MemoryPattern.Purge>): Response<typeof MemoryPattern.Purge> {
    return inContext(request, () => this.memory.purge(request));
  }

  @MessagePattern(MemoryPattern.Refresh)
  refresh(@Payload() request: Request<typeof MemoryPattern.Refresh>): Response<typeof MemoryPattern.Refresh> {
    return inContext(request, () => this.memory.refresh(request));
  }

  @MessagePattern(MemoryPattern.Confirm)
  confirm(@Payload() request: Request<typeof MemoryPattern.Confirm>): Response<typeof MemoryPattern.Confirm> {
    return inContext(request, () => this.memory.confirm(request));
  }

  @MessagePattern(MemoryPattern.Categorize)
  categorize(@Payload() request: Request<typeof MemoryPattern.Categorize>): Response<typeof MemoryPattern.Categorize> {
    return inContext(request, () => this.memory.categorize(request));
  }

  @MessagePattern(MemoryPattern.Archive)
  archive(@Payload() request: Request<typeof MemoryPattern.Archive>): Response<typeof MemoryPattern.Archive> {
    return inContext(request, () => this.memory.archive(request));
  }

  @MessagePattern(MemoryPattern.Restore)
  restore(@Payload() request: Request<typeof MemoryPattern.Restore>): Response<typeof MemoryPattern.Restore> {
    return inContext(request, () => this.memory.restore(request));
  }

  @MessagePattern(MemoryPattern.Consolidate)
  consolidate(
    @Payload() request: Request<typeof MemoryPattern.Consolidate>,
  ): Response<typeof MemoryPattern.Consolidate> {
    return inContext(request, () => this.memory.consolidate(request));
  }

  @MessagePattern(MemoryPattern.Tier1)
  tier1(@Payload() request: Request<typeof MemoryPattern.Tier1>): Response<typeof MemoryPattern.Tier1> {
    return inContext(request, () => this.memory.tier1(request));
  }

  @MessagePattern(MemoryPattern.Stats)
  stats(@Payload() request: Request<typeof MemoryPattern.Stats>): Response<typeof MemoryPattern.Stats> {
    return inContext(request, () => this.memory.stats(request));
  }

  @MessagePattern(MemoryPattern.EventsAfter)
  eventsAfter(
    @Payload() request: Request<typeof MemoryPattern.EventsAfter>,
  ): Response<typeof MemoryPattern.EventsAfter> {
    return inContext(request, () => this.memory.eventsAfter(request));
  }

  @MessagePattern(MemoryPattern.Ping)
  ping(@Payload() request: Request<typeof MemoryPattern.Ping>): Response<typeof MemoryPattern.Ping> {
    return inContext(request, () => this.memory.ping(request));
  }
}

function inContext<T>(request: unknown, run: () => Promise<T>): Promise<T> {
  const requestId = (request as { requestId?: unknown } | null)?.requestId;
  return typeof requestId === 'string' ? requestContext.run({ requestId }, run) : run();
}
