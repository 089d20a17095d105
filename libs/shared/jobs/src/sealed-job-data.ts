import type { ExtractExchangeData, JobItem } from './job-item.js';
import { JobName } from './queue-name.js';

/** Seals and opens bytes bound to associated data: the at-rest key (@engram/config's EncryptionKey). */
export interface JobDataSealer {
  seal(plaintext: Uint8Array, associatedData: string): Buffer;
  open(sealed: Uint8Array, associatedData: string): Buffer;
}

/**
 * An extraction job as Redis keeps it when a key is set: what names and routes the job stays clear
 * (the pool a purge filters on, the request id its logs carry, the exchange id its job id comes
 * from); the exchange and the suggestions, the only text a job carries, are sealed, because Redis
 * writes its jobs to its append-only file and that file sits on a disk like the data dir.
 */
export interface SealedExtractExchangeData {
  readonly pool: string;
  readonly requestId: string;
  readonly exchangeId: string;
  readonly sealed: string;
}

/** A job's data could not be opened: sealed with no key configured, or with another key. */
export class SealedJobError extends Error {
  override name = 'SealedJobError';
}

type Texts = Pick<ExtractExchangeData, 'suggestions' | 'exchange'>;

function boundTo(data: Pick<SealedExtractExchangeData, 'pool' | 'requestId' | 'exchangeId'>): string {
  return JSON.stringify(['engram extract job', data.pool, data.requestId, data.exchangeId]);
}

/** The data to hand to Redis for a job: an extraction's texts sealed when there is a key, anything else as it is. */
export function queuedJobData(item: JobItem, sealer: JobDataSealer | null): object {
  if (item.name !== JobName.ExtractExchange || !sealer) return item.data;
  const { suggestions, exchange, ...clear } = item.data;
  const texts: Texts = { suggestions, exchange };
  const sealed = sealer.seal(Buffer.from(JSON.stringify(texts)), boundTo(clear)).toString('base64');
  return { ...clear, sealed } satisfies SealedExtractExchangeData;
}

/** Whether Redis holds this job's texts sealed. */
export function isSealedJobData(data: unknown): data is SealedExtractExchangeData {
  return typeof data === 'object' && data !== null && typeof (data as { sealed?: unknown }).sealed === 'string';
}

/**
 * An extraction job's data as the worker and a purge read it: opened when sealed (SealedJobError when
 * no key, or another one, is configured), as it is when not (a job queued before the key was set).
 */
export function openedExtractionData(data: ExtractExchangeData | SealedExtractExchangeData, sealer: JobDataSealer | null): ExtractExchangeData {
  if (!isSealedJobData(data)) return data;
  if (!sealer) throw new SealedJobError('this extraction job is sealed and no ENGRAM_ENCRYPTION_KEY is configured here');
  const { sealed, ...clear } = data;
  let texts: Texts;
  try {
    texts = JSON.parse(sealer.open(Buffer.from(sealed, 'base64'), boundTo(clear)).toString('utf8')) as Texts;
  } catch (error) {
    throw new SealedJobError(`this extraction job does not open with the configured key: ${(error as Error).message}`);
  }
  return { ...clear, ...texts };
}
