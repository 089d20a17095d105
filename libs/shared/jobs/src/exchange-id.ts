import { createHash } from 'node:crypto';
import type { SpoolExtractionRequest } from '@engram/contracts';

/**
 * The id of one exchange handed to extraction, made by the gateway from the exchange itself: its pool,
 * the request id and what both sides said. The extraction job's id, the spool's file and the ids of
 * the facts extracted from it derive from it, so the same exchange enqueued twice (the gateway's try
 * and the spool's drain) is one job, while two exchanges a client sent under one `x-request-id` (in one
 * pool or two) are two, and neither loses its facts to the other.
 */
export function exchangeIdOf(exchange: Omit<SpoolExtractionRequest, 'exchangeId'>): string {
  const { pool, requestId, suggestions, exchange: sides } = exchange;
  return createHash('sha256')
    .update(JSON.stringify([pool, requestId, sides.user, sides.assistant, suggestions]))
    .digest('hex')
    .slice(0, 32);
}
