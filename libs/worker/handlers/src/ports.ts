import type { MemoryContract, MemoryPattern } from '@engram/contracts';

/** The memory patterns maintenance uses: reads, and writes that are each one event with a worker actor. */
export type MaintenancePattern =
  | typeof MemoryPattern.Get
  | typeof MemoryPattern.List
  | typeof MemoryPattern.Stats
  | typeof MemoryPattern.EventsAfter
  | typeof MemoryPattern.Store
  | typeof MemoryPattern.Refresh
  | typeof MemoryPattern.Categorize
  | typeof MemoryPattern.DecaySweep
  | typeof MemoryPattern.Consolidate;

/** The most entries one List answers (the memory service's maximum); pools larger than this are handled in part. */
export const LIST_LIMIT = 1000;

/** The subset of `MemoryClient.call` the handlers need; MemoryClient satisfies it as is. */
export interface MemoryPort {
  call<P extends MaintenancePattern>(pattern: P, request: MemoryContract[P][0]): Promise<MemoryContract[P][1]>;
}

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** One chat completion against the upstream; resolves to the assistant's text. */
export interface LlmPort {
  complete(request: { readonly model: string; readonly messages: readonly ChatMessage[]; readonly json: boolean }): Promise<string>;
}

export interface Clock {
  now(): Date;
}

/** What a handler knows about the delivery it runs in. */
export interface JobContext {
  /** BullMQ job id: the causation id of writes that have no triggering event. */
  readonly jobId: string;
  /** When the job was enqueued; a reference at or after it means a previous run already did its refresh. */
  readonly enqueuedAt: Date;
}
