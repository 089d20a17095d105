import type { SpoolExtractionRequest } from '@engram/contracts';
import { JobName, QueueName } from './queue-name.js';

/** Payloads carry ids; state lives in the memory service. */
export interface CategorizeEntryData {
  readonly pool: string;
  readonly memoryId: string;
  /** Id of the event that caused this job; also the source of the job id. */
  readonly eventId: string;
}
export interface ConsolidatePoolData {
  readonly pool: string;
  /** The pool's last seq when the job was derived; a run against a newer pool is still correct. */
  readonly seq: number;
  readonly eventId: string;
}
export interface DecaySweepData {
  /** Absent: every pool. */
  readonly pool?: string;
  /** ISO time to evaluate decay at; absent: the worker's clock. Lets tests and operators replay a sweep. */
  readonly asOf?: string;
}
/** The exchange to extract from: the same fields memory spools when Redis is away (SpoolExtractionRequest). */
export type ExtractExchangeData = SpoolExtractionRequest;

export interface EmbedPoolData {
  readonly pool: string;
  /** The event that brought new text to the pool (or a backfill's own id at start); the job id's source. */
  readonly eventId: string;
}

export type JobItem =
  | { readonly name: typeof JobName.CategorizeEntry; readonly data: CategorizeEntryData }
  | { readonly name: typeof JobName.ConsolidatePool; readonly data: ConsolidatePoolData }
  | { readonly name: typeof JobName.DecaySweep; readonly data: DecaySweepData }
  | { readonly name: typeof JobName.ExtractExchange; readonly data: ExtractExchangeData }
  | { readonly name: typeof JobName.EmbedPool; readonly data: EmbedPoolData };

/** Which queue each job runs on. */
export const queueOfJob = {
  [JobName.CategorizeEntry]: QueueName.Categorize,
  [JobName.ConsolidatePool]: QueueName.Consolidate,
  [JobName.DecaySweep]: QueueName.Decay,
  [JobName.ExtractExchange]: QueueName.Extract,
  [JobName.EmbedPool]: QueueName.Embed,
} as const satisfies Readonly<Record<JobName, QueueName>>;

/** The job names that run on queue Q (a processor's exhaustive switch covers exactly these). */
export type JobNameOfQueue<Q extends QueueName> = {
  [N in JobName]: (typeof queueOfJob)[N] extends Q ? N : never;
}[JobName];

/** The jobs that run on queue Q. */
export type JobOfQueue<Q extends QueueName> = Extract<JobItem, { name: JobNameOfQueue<Q> }>;
