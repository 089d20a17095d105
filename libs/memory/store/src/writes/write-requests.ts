import { MemoryError, type ConsolidateRequest, type RefreshRequest, type StoreRequest, type UpdateRequest } from '@engram/contracts';
import { WriteRejection, type Category, type MemoryType, type StoreCommand, type WriteContext } from '@engram/domain';
import { idempotentMemoryId } from './idempotency.js';
import { newEventId } from './ids.js';
import {
  invalid,
  validActor,
  validCategory,
  validCausation,
  validConfidence,
  validContent,
  validId,
  validPool,
  validSource,
  validType,
} from './validation.js';

/**
 * The checks of a write request before the domain decides it: its shape, never the state. Every
 * failure is a MemoryError('invalid_request') naming the field (see validation.ts).
 */

const REFRESH_MAX_IDS = 100;

/** Who writes where, why and when; `at` is the clock's time now. */
export function writeContextOf(request: { pool: unknown; actor: unknown; causationId?: unknown; requestId?: unknown }, now: Date): WriteContext {
  return {
    pool: validPool(request.pool),
    actor: validActor(request.actor),
    causationId: validCausation(request.causationId, request.requestId),
    at: now.toISOString(),
    newEventId,
  };
}

export function requiredId(id: unknown): string {
  if (typeof id !== 'string' || id === '') throw invalid('id must be a non-empty string');
  return id;
}

/** A store request once validated: the domain's command without what the pipeline supplies (context, fresh ids). */
export type StoreFields = Omit<StoreCommand, 'context' | 'freshId'>;

export function storeFieldsOf(request: StoreRequest, context: WriteContext): StoreFields {
  const content = validContent(request.content);
  const category = request.category === undefined ? null : validCategory(request.category);
  const type = request.type === undefined ? defaultType(category) : validType(request.type);
  const confidence = request.confidence === undefined ? 1 : validConfidence(request.confidence);
  const source = request.source === undefined ? (context.actor === 'user' ? 'user' : 'llm') : validSource(request.source);
  const chosenId =
    request.id !== undefined
      ? validId(request.id)
      : request.idempotencyKey !== undefined
        ? idempotentMemoryId(context.pool, request.idempotencyKey)
        : undefined;
  return { chosenId, type, category, content, confidence, source, dedupe: request.dedupe === true };
}

/** The fields an update sets; absent ones are left out. */
export function updateFieldsOf(request: UpdateRequest): {
  readonly content?: string;
  readonly category?: Category | null;
  readonly type?: MemoryType;
  readonly confirmed?: boolean;
} {
  const content = request.content === undefined ? undefined : validContent(request.content);
  const category = request.category === undefined ? undefined : validCategory(request.category);
  const type = request.type === undefined ? undefined : validType(request.type);
  if (request.confirmed !== undefined && typeof request.confirmed !== 'boolean') throw invalid('confirmed must be a boolean');
  return {
    ...(content !== undefined ? { content } : {}),
    ...(category !== undefined ? { category } : {}),
    ...(type !== undefined ? { type } : {}),
    ...(request.confirmed !== undefined ? { confirmed: request.confirmed } : {}),
  };
}

export function refreshIdsOf(request: RefreshRequest): string[] {
  if (!Array.isArray(request.ids) || request.ids.length === 0) throw invalid('ids must be a non-empty array');
  if (request.ids.length > REFRESH_MAX_IDS) throw invalid(`at most ${REFRESH_MAX_IDS} ids per refresh`);
  return request.ids.map((id: unknown) => requiredId(id));
}

/** The merges of a consolidation, each given an unused id for its merged entry by `freshId`. */
export function mergesOf(request: ConsolidateRequest, freshId: () => string) {
  if (typeof request.model !== 'string' || request.model === '') throw invalid('model must be a non-empty string');
  if (!Array.isArray(request.merges) || request.merges.length === 0) throw invalid('merges must be a non-empty array');
  return request.merges.map((merge) => {
    const content = validContent(merge.content);
    const type = validType(merge.type);
    const category = validCategory(merge.category ?? null);
    const supersedes: readonly unknown[] = Array.isArray(merge.supersedes) ? merge.supersedes : [];
    if (supersedes.length === 0) throw invalid('each merge must supersede at least one id');
    return { content, type, category, supersedes: supersedes.map((id) => requiredId(id)), id: freshId() };
  });
}

/** The time a decay sweep evaluates at: the request's ISO time, else the command's own. */
export function asOfOf(asOf: unknown, at: string): Date {
  if (asOf === undefined) return new Date(at);
  const time = typeof asOf === 'string' ? new Date(asOf) : new Date(Number.NaN);
  if (Number.isNaN(time.getTime())) throw invalid('asOf must be an ISO-8601 time');
  return time;
}

/** Runs a domain decision; a write rule's refusal is answered as the MemoryError of the same code and message. */
export function decided<T>(decide: () => T): T {
  try {
    return decide();
  } catch (error) {
    if (error instanceof WriteRejection) throw new MemoryError(error.code, error.message);
    throw error;
  }
}

function defaultType(category: string | null): MemoryType {
  return category === 'preference' || category === 'person' ? 'USER' : 'MEMORY';
}
