import { MemoryError, MemoryPattern, type MemoryContract } from '@engram/contracts';
import type { MemoryService } from '@engram/memory-store';

type Pattern = keyof MemoryContract;
type Handlers = { [P in Pattern]: (service: MemoryService, request: MemoryContract[P][0]) => Promise<MemoryContract[P][1]> };

/** Each pattern to the service method the memory app's RPC controller calls for it. */
const HANDLERS: Handlers = {
  [MemoryPattern.Store]: (service, request) => service.store(request),
  [MemoryPattern.Search]: (service, request) => service.search(request),
  [MemoryPattern.List]: (service, request) => service.list(request),
  [MemoryPattern.Page]: (service, request) => service.page(request),
  [MemoryPattern.Get]: (service, request) => service.get(request),
  [MemoryPattern.Update]: (service, request) => service.update(request),
  [MemoryPattern.Delete]: (service, request) => service.delete(request),
  [MemoryPattern.Purge]: (service, request) => service.purge(request),
  [MemoryPattern.Refresh]: (service, request) => service.refresh(request),
  [MemoryPattern.Confirm]: (service, request) => service.confirm(request),
  [MemoryPattern.Categorize]: (service, request) => service.categorize(request),
  [MemoryPattern.Archive]: (service, request) => service.archive(request),
  [MemoryPattern.Restore]: (service, request) => service.restore(request),
  [MemoryPattern.Consolidate]: (service, request) => service.consolidate(request),
  [MemoryPattern.DecaySweep]: (service, request) => service.decaySweep(request),
  [MemoryPattern.Tier1]: (service, request) => service.tier1(request),
  [MemoryPattern.Tier1Plan]: (service, request) => service.tier1Plan(request),
  [MemoryPattern.Stats]: (service, request) => service.stats(request),
  [MemoryPattern.EventsAfter]: (service, request) => service.eventsAfter(request),
  [MemoryPattern.Events]: (service, request) => service.events(request),
  [MemoryPattern.Ping]: (service, request) => service.ping(request),
  [MemoryPattern.VectorsMissing]: (service, request) => vectorsOf(service).missing(request),
  [MemoryPattern.StoreVectors]: (service, request) => vectorsOf(service).storeVectors(request),
  // The extraction spool is the memory app's, beside the store: not here, as if memory could not be reached.
  [MemoryPattern.SpoolExtraction]: () => Promise.reject(new MemoryError('unavailable', 'the extraction spool is not served in process')),
};

export interface MemoryInProcess {
  call<P extends Pattern>(pattern: P, request: MemoryContract[P][0]): Promise<MemoryContract[P][1]>;
}

/**
 * The real memory service as a client of it sees it, in this process: each call goes to the method
 * the RPC controller calls, request and answer pass through JSON as on the wire, and a failure
 * arrives as the MemoryError the client would raise. Specs of the services that call memory (the
 * worker's handlers, the gateway's tools) run against this instead of a double of their own, so
 * they cannot certify behaviour the memory service does not have. Once the service is closed, every
 * call is MemoryError('unavailable'), as from a memory process that was stopped.
 */
export function memoryInProcess(service: () => MemoryService): MemoryInProcess {
  return {
    async call<P extends Pattern>(pattern: P, request: MemoryContract[P][0]): Promise<MemoryContract[P][1]> {
      // A closed service is a stopped process: its port refuses the connection.
      if (service().closed) throw new MemoryError('unavailable', `memory service ${pattern}: connect ECONNREFUSED (the service is stopped)`);
      const handler = HANDLERS[pattern] as (service: MemoryService, request: MemoryContract[P][0]) => Promise<MemoryContract[P][1]>;
      try {
        return overTheWire(await handler(service(), overTheWire(request)));
      } catch (error) {
        if (error instanceof MemoryError) throw new MemoryError(error.code, error.message);
        throw new MemoryError('internal', `memory service ${pattern}: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };
}

export interface MemoryCall {
  readonly pattern: string;
  readonly request: Record<string, unknown>;
}

/** The memory it is given, answering as it does, with each call that reached it noted. */
export function observed<M extends MemoryInProcess>(memory: M): MemoryInProcess & { readonly calls: MemoryCall[] } {
  const calls: MemoryCall[] = [];
  return {
    calls,
    call: (pattern, request) => {
      calls.push({ pattern, request: request as Record<string, unknown> });
      return memory.call(pattern, request);
    },
  };
}

function overTheWire<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

function vectorsOf(service: MemoryService): NonNullable<MemoryService['vectors']> {
  if (!service.vectors) throw new MemoryError('unavailable', 'hybrid search is off on the memory service');
  return service.vectors;
}
