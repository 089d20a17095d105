import { MemoryError, PAGE_SORTS, type PageSort } from '@engram/contracts';
import {
  CONTENT_MAX_CHARS,
  isCategory,
  isMemoryType,
  isValidPoolName,
  MEMORY_SOURCES,
  storedText,
  type Actor,
  type Category,
  type MemorySource,
  type MemoryType,
} from '@engram/domain';
import { CALLER_ID_PATTERN } from './ids.js';

/** Request checks of the memory service: every failure is a MemoryError('invalid_request') naming the field. */

const SOURCES: readonly MemorySource[] = MEMORY_SOURCES;
export const QUERY_MAX_CHARS = 4000;
export const REASON_MAX_CHARS = 500;

export function invalid(message: string): MemoryError {
  return new MemoryError('invalid_request', message);
}

export function validPool(pool: unknown): string {
  if (!isValidPoolName(pool)) {
    throw invalid(`invalid pool name ${JSON.stringify(pool)}: expected ^[a-z0-9][a-z0-9._-]{0,63}$`);
  }
  return pool;
}

/** The content as every copy of it will read (see storedText): the one place a write's text is checked. */
export function validContent(content: unknown): string {
  if (typeof content !== 'string') throw invalid('content must be a string');
  const trimmed = storedText(content).trim();
  if (trimmed === '') throw invalid('content must not be empty');
  if (trimmed.length > CONTENT_MAX_CHARS) {
    throw invalid(`content is ${trimmed.length} characters; the limit is ${CONTENT_MAX_CHARS}`);
  }
  return trimmed;
}

export function validCategory(category: unknown): Category | null {
  if (category === null) return null;
  if (!isCategory(category)) {
    throw invalid(`invalid category ${JSON.stringify(category)}: expected preference, person, environment, project, decision, gotcha or null`);
  }
  return category;
}

export function validType(type: unknown): MemoryType {
  if (!isMemoryType(type)) throw invalid(`invalid type ${JSON.stringify(type)}: expected USER or MEMORY`);
  return type;
}

export function validSource(source: unknown): MemorySource {
  if (typeof source !== 'string' || !(SOURCES as readonly string[]).includes(source)) {
    throw invalid(`invalid source ${JSON.stringify(source)}: expected one of ${SOURCES.join(', ')}`);
  }
  return source as MemorySource;
}

export function validConfidence(confidence: unknown): number {
  if (typeof confidence !== 'number' || !Number.isFinite(confidence) || confidence < 0 || confidence > 1) {
    throw invalid('confidence must be a number from 0 to 1');
  }
  return confidence;
}

export function validActor(actor: unknown): Actor {
  if (typeof actor !== 'string' || actor.trim() === '' || actor.length > 64) {
    throw invalid('actor must be a non-empty string of at most 64 characters');
  }
  return actor as Actor;
}

export function validId(id: unknown, field = 'id'): string {
  if (typeof id !== 'string' || !CALLER_ID_PATTERN.test(id)) {
    throw invalid(`invalid ${field} ${JSON.stringify(id)}: expected 4-64 characters of A-Z a-z 0-9 _ -`);
  }
  return id;
}

export function validLimit(limit: unknown, fallback: number, max: number): number {
  if (limit === undefined || limit === null) return fallback;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) throw invalid('limit must be a positive integer');
  return Math.min(limit, max);
}

export function validOffset(offset: unknown): number {
  if (offset === undefined || offset === null) return 0;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0) throw invalid('offset must be a whole number >= 0');
  return offset;
}

export function validReason(reason: unknown): string | null {
  if (reason === undefined || reason === null) return null;
  if (typeof reason !== 'string') throw invalid('reason must be a string');
  return reason.slice(0, REASON_MAX_CHARS);
}

export function validQuery(query: unknown): string {
  if (query === undefined || query === null) return '';
  if (typeof query !== 'string') throw invalid('query must be a string');
  return query.slice(0, QUERY_MAX_CHARS);
}

export function validCausation(causationId: unknown, requestId: unknown): string | null {
  const value = causationId ?? requestId ?? null;
  if (value === null) return null;
  if (typeof value !== 'string' || value.length > 200) throw invalid('causationId must be a string of at most 200 characters');
  return value;
}

export function notFound(pool: string, id: string): MemoryError {
  return new MemoryError('not_found', `memory ${id} not found in pool ${pool}`);
}

/** The sort and filters of a page request; undefined filters are left out. */
export function validPageFilters(request: {
  sort?: unknown;
  archived?: unknown;
  type?: unknown;
  category?: unknown;
  confirmed?: unknown;
  source?: unknown;
}): { sort: PageSort; archived: boolean; type?: MemoryType; category?: Category; confirmed?: boolean; source?: MemorySource } {
  const sort = request.sort ?? 'created';
  if (!(PAGE_SORTS as readonly unknown[]).includes(sort)) throw invalid(`sort must be one of ${PAGE_SORTS.join(', ')}`);
  for (const flag of ['archived', 'confirmed'] as const) {
    if (request[flag] !== undefined && typeof request[flag] !== 'boolean') throw invalid(`${flag} must be a boolean`);
  }
  const category = request.category === undefined ? undefined : validCategory(request.category);
  return {
    sort: sort as PageSort,
    archived: request.archived === true,
    ...(request.type !== undefined ? { type: validType(request.type) } : {}),
    ...(category ? { category } : {}),
    ...(request.confirmed !== undefined ? { confirmed: request.confirmed as boolean } : {}),
    ...(request.source !== undefined ? { source: validSource(request.source) } : {}),
  };
}
