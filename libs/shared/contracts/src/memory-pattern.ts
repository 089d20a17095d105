/** Message patterns of the memory service (NestJS microservices, TCP). */
export const MemoryPattern = {
  Store: 'memory.store',
  Search: 'memory.search',
  List: 'memory.list',
  Page: 'memory.page',
  Get: 'memory.get',
  Update: 'memory.update',
  Delete: 'memory.delete',
  Purge: 'memory.purge',
  Refresh: 'memory.refresh',
  Confirm: 'memory.confirm',
  Categorize: 'memory.categorize',
  Archive: 'memory.archive',
  Restore: 'memory.restore',
  Consolidate: 'memory.consolidate',
  DecaySweep: 'memory.decay-sweep',
  Tier1: 'memory.tier1',
  Tier1Plan: 'memory.tier1-plan',
  Stats: 'memory.stats',
  EventsAfter: 'memory.events-after',
  Events: 'memory.events',
  SpoolExtraction: 'memory.spool-extraction',
  Ping: 'memory.ping',
  VectorsMissing: 'memory.vectors-missing',
  StoreVectors: 'memory.store-vectors',
} as const;

export type MemoryPatternName = (typeof MemoryPattern)[keyof typeof MemoryPattern];
