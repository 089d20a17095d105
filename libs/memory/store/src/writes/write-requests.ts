import { MemoryError, type MemoryPattern, type ParsedRequest } from '@engram/contracts';
import { WriteRejection, type Category, type MemoryType, type StoreCommand, type WriteContext } from '@engram/domain';
import { idempotentMemoryId } from './idempotency.js';
import { newEventId } from './ids.js';

/**
 * A parsed write request (see parseMemoryRequest) as the domain's command: what the request leaves
 * to defaults, filled in. Shape checks are the schema's; state checks the domain's deciders'.
 */

/** Who writes where, why and when; `at` is the clock's time now. */
export function writeContextOf(
  request: { readonly pool: string; readonly actor: WriteContext['actor']; readonly causationId?: string | null; readonly requestId?: string },
  now: Date,
): WriteContext {
  return {
    pool: request.pool,
    actor: request.actor,
    causationId: request.causationId ?? request.requestId ?? null,
    at: now.toISOString(),
    newEventId,
  };
}

/** A store request once parsed: the domain's command without what the pipeline supplies (context, fresh ids). */
export type StoreFields = Omit<StoreCommand, 'context' | 'freshId'>;

export function storeFieldsOf(request: ParsedRequest<typeof MemoryPattern.Store>, context: WriteContext): StoreFields {
  const category = request.category ?? null;
  const chosenId =
    request.id !== undefined
      ? request.id
      : request.idempotencyKey !== undefined
        ? idempotentMemoryId(context.pool, request.idempotencyKey)
        : undefined;
  return {
    chosenId,
    type: request.type ?? defaultType(category),
    category,
    content: request.content,
    confidence: request.confidence ?? 1,
    source: request.source ?? (context.actor === 'user' ? 'user' : 'llm'),
    dedupe: request.dedupe === true,
  };
}

/** The fields an update sets; absent ones are left out. */
export function updateFieldsOf(request: ParsedRequest<typeof MemoryPattern.Update>): {
  readonly content?: string;
  readonly category?: Category | null;
  readonly type?: MemoryType;
  readonly confirmed?: boolean;
} {
  return {
    ...(request.content !== undefined ? { content: request.content } : {}),
    ...(request.category !== undefined ? { category: request.category } : {}),
    ...(request.type !== undefined ? { type: request.type } : {}),
    ...(request.confirmed !== undefined ? { confirmed: request.confirmed } : {}),
  };
}

/** The merges of a consolidation, each given an unused id for its merged entry by `freshId`. */
export function mergesOf(request: ParsedRequest<typeof MemoryPattern.Consolidate>, freshId: () => string) {
  return request.merges.map((merge) => ({ ...merge, id: freshId() }));
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
