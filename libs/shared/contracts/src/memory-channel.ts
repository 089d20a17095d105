/**
 * Redis pub/sub channel on which the memory service announces committed changes, one message
 * per touched pool: `{"pool":"...","seq":N}`. Gateways drop their cached Tier 1 for that pool.
 * Losing a message only delays a refresh: gateways also keep a short TTL.
 */
export const MEMORY_CHANGED_CHANNEL = 'engram:memory-changed';

export interface MemoryChangedMessage {
  readonly pool: string;
  readonly seq: number;
}
