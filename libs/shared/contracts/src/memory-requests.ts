import { CATEGORIES, CONTENT_MAX_CHARS, isValidPoolName, MEMORY_SOURCES, MEMORY_TYPES, storedText, type Actor } from '@engram/domain';
import { z } from 'zod';
import { MemoryError } from './memory-error.js';
import { MemoryPattern } from './memory-pattern.js';

/**
 * The one schema of each memory RPC request: what a caller may send, and what the memory service
 * works with once it is parsed (text as stored, defaults filled in, limits clamped). Every request is
 * parsed where it enters memory (MemoryService, whoever calls it: the RPC controller, the CLI, a
 * test); the gateway's REST bodies and memory tools are checked with the same field schemas
 * (`memoryFields`, `.pick` of these), so a caller's mistake gets the same answer on every surface.
 */

/** Ids a caller may choose (idempotent store): url-safe, short enough to cite. */
export const CALLER_ID_PATTERN = /^[A-Za-z0-9_-]{4,64}$/;
/** Printable ASCII, as HTTP header values are; long enough for a UUID, a ULID or a tool call id plus context. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
export const QUERY_MAX_CHARS = 4000;
export const REASON_MAX_CHARS = 500;
/** A page of memories answers at most this many entries. */
export const PAGE_MAX_LIMIT = 500;

/** How a page of memories is ordered, newest / most recently used / most confident first. */
export const PAGE_SORTS = ['created', 'last_used', 'confidence'] as const;
export type PageSort = (typeof PAGE_SORTS)[number];

const pool = z.string('expected a pool name').refine(isValidPoolName, {
  error: (issue) => `invalid pool name ${JSON.stringify(issue.input)}: expected ^[a-z0-9][a-z0-9._-]{0,63}$`,
});
/** The content as every copy of it will read (see storedText): the one place a write's text is checked. */
const content = z
  .string('must be a string')
  .transform((text) => storedText(text).trim())
  .pipe(
    z
      .string()
      .min(1, 'must not be empty')
      .max(CONTENT_MAX_CHARS, { error: (issue) => `${String(issue.input).length} characters; the limit is ${CONTENT_MAX_CHARS}` }),
  );
const category = z.enum(CATEGORIES, `expected ${CATEGORIES.join(', ')}`);
const type = z.enum(MEMORY_TYPES, 'expected USER or MEMORY');
const source = z.enum(MEMORY_SOURCES, `expected one of ${MEMORY_SOURCES.join(', ')}`);
const actor = z.custom<Actor>(
  (value) => typeof value === 'string' && value.trim() !== '' && value.length <= 64,
  'must be a non-empty string of at most 64 characters',
);
/** An existing entry's id. */
const id = z.string('must be a non-empty string').min(1, 'must be a non-empty string');
const callerId = z.string().regex(CALLER_ID_PATTERN, 'expected 4-64 characters of A-Z a-z 0-9 _ -');
const reason = z
  .string('must be a string')
  .nullish()
  .transform((text) => (text === undefined || text === null ? null : text.slice(0, REASON_MAX_CHARS)));
const model = z.string('must be a non-empty string').min(1, 'must be a non-empty string').max(200);
const seqAfter = z.number().int().min(0, 'must be a non-negative integer');
/** A positive limit, `fallback` when absent, at most `max` (a larger one is clamped, not refused). */
const limit = (fallback: number, max: number) =>
  z
    .number()
    .int('must be a positive integer')
    .min(1, 'must be a positive integer')
    .nullish()
    .transform((value) => Math.min(value ?? fallback, max));
const requestId = z.string().optional();

/** The field schemas other surfaces check their input with (the gateway's REST bodies, the memory tools). */
export const memoryFields = { pool, content, category, type, source, actor, id, callerId, reason, model } as const;

/** Every write carries who did it and, when there is one, what caused it (an event id or a request id). */
const writeMeta = {
  actor,
  causationId: z.string().max(200, 'must be a string of at most 200 characters').nullish(),
  /** The causation when no causationId is given, hence as long as one at most. */
  requestId: z.string().max(200, 'must be a string of at most 200 characters').optional(),
};

export const StoreRequestSchema = z.object({
  ...writeMeta,
  pool,
  /** Caller-chosen id (4-64 of A-Za-z0-9_-): storing an existing id returns the existing entry, no new event. */
  id: callerId.optional(),
  /**
   * Without `id`: a retry of this store with the same key (in the same pool) returns the entry the
   * first attempt stored instead of storing another (the REST `Idempotency-Key`, the model's tool call).
   */
  idempotencyKey: z.string().regex(IDEMPOTENCY_KEY_PATTERN, 'must be 1-255 printable ASCII characters without spaces').optional(),
  /**
   * With `idempotencyKey`: a retry must be the same store (content, type, category), else it is refused
   * with `idempotency_key_reused` rather than answered with the first entry (the REST `Idempotency-Key`).
   * Without, the first entry is the answer (a model's replayed tool call is the same call).
   */
  idempotencyKeyBindsRequest: z.boolean().optional(),
  content,
  /** Absent: USER for a preference or a person, else MEMORY. */
  type: type.optional(),
  category: category.nullish(),
  /** Absent: `user` when a person writes, else `llm`. */
  source: source.optional(),
  confidence: z.number('must be a number from 0 to 1').min(0, 'must be a number from 0 to 1').max(1, 'must be a number from 0 to 1').optional(),
  /**
   * When an active entry of the pool already says this (see existingFact), record a reference to it
   * and answer with it (`existing: true`) instead of storing a second copy. The model's writes do; a
   * person's REST POST only with `?dedupe=true`.
   */
  dedupe: z.boolean().optional(),
});

export const SearchRequestSchema = z.object({
  pool,
  /** Any text: it is reduced to its words; none (or absent) ranks by effective confidence. */
  query: z
    .string('must be a string')
    .nullish()
    .transform((text) => (text ?? '').slice(0, QUERY_MAX_CHARS)),
  limit: limit(10, 100),
  category: category.optional(),
  includeArchived: z.boolean().optional(),
  /** Record a reference for what is returned (the model's search does, a person's browsing does not). */
  recordReference: z.boolean().optional(),
  /** Who the recorded reference is attributed to; default `llm`. */
  actor: actor.default('llm'),
  requestId,
});

export const ListRequestSchema = z.object({
  pool,
  category: category.optional(),
  type: type.optional(),
  archived: z.boolean().optional(),
  limit: limit(50, 1000),
  /** Entries to skip, for paging through a pool larger than one page (newest first). */
  offset: z
    .number()
    .int('must be a whole number >= 0')
    .min(0, 'must be a whole number >= 0')
    .nullish()
    .transform((value) => value ?? 0),
  requestId,
});

/** One page of a pool's entries, keyset-paged: pass the previous page's `nextCursor` for the next. */
export const PageRequestSchema = z.object({
  pool,
  sort: z.enum(PAGE_SORTS, `must be one of ${PAGE_SORTS.join(', ')}`).default('created'),
  archived: z.boolean().default(false),
  type: type.optional(),
  /** Null: no category filter. */
  category: category.nullish().transform((value) => value ?? undefined),
  confirmed: z.boolean().optional(),
  source: source.optional(),
  limit: limit(50, PAGE_MAX_LIMIT),
  cursor: z.string().max(512, 'must be a nextCursor this listing returned').nullish(),
  requestId,
});

export const GetRequestSchema = z.object({ pool, id: z.string('must be a string') });

export const UpdateRequestSchema = z.object({
  ...writeMeta,
  pool,
  id,
  content: content.optional(),
  /** Null: no category. */
  category: category.nullable().optional(),
  type: type.optional(),
  confirmed: z.boolean().optional(),
});

export const IdRequestSchema = z.object({ ...writeMeta, pool, id, reason });

export const ConfirmRequestSchema = IdRequestSchema.extend({ confirmed: z.boolean('must be a boolean') });

export const RefreshRequestSchema = z.object({
  ...writeMeta,
  pool,
  ids: z.array(id, 'must be a non-empty array').min(1, 'must be a non-empty array').max(100, 'at most 100 ids per refresh'),
});

export const CategorizeRequestSchema = z.object({
  ...writeMeta,
  pool,
  id,
  category: z.enum(CATEGORIES, `expected a category: ${CATEGORIES.join(', ')}`),
});

export const ConsolidateRequestSchema = z.object({
  ...writeMeta,
  pool,
  model,
  merges: z
    .array(
      z.object({
        content,
        type,
        category: category.nullish().transform((value) => value ?? null),
        supersedes: z.array(id).min(1, 'each merge must supersede at least one id'),
      }),
      'must be a non-empty array',
    )
    .min(1, 'must be a non-empty array'),
});

/** Archive every active entry of the pool that decay has taken below the threshold (the worker's sweep). */
export const DecaySweepRequestSchema = z.object({
  ...writeMeta,
  pool,
  /** ISO time to evaluate decay at; absent: the memory service's clock. */
  asOf: z
    .string('must be an ISO-8601 time')
    .refine((time) => !Number.isNaN(new Date(time).getTime()), 'must be an ISO-8601 time')
    .optional(),
});

export const PoolRequestSchema = z.object({ pool, requestId });

export const NoRequestSchema = z.object({});

export const EventsAfterRequestSchema = z.object({ after: seqAfter, pool: pool.optional(), limit: limit(100, 1000) });

/** One page of a pool's events (or of one entry's history), oldest first. */
export const EventsRequestSchema = z.object({
  pool,
  /** Events with a seq above this one; default 0. Ignored when `cursor` is given. */
  after: seqAfter.default(0),
  /** The `nextCursor` of the previous page. */
  cursor: z.string().nullish(),
  limit: limit(100, 1000),
  /** Only the events about this entry. */
  memoryId: callerId.nullish().transform((value) => value ?? undefined),
  requestId,
});

/** An exchange whose extraction job could not reach Redis: memory keeps it on disk and enqueues it later. */
export const SpoolExtractionRequestSchema = z.object({
  pool,
  /** Contents of <MEMORY_SUGGEST> markers, already stripped from the client's view. */
  suggestions: z.array(z.string(), 'must be an array of strings'),
  /** The last user message and the assistant's answer, for context-aware extraction. */
  exchange: z.object({ user: z.string(), assistant: z.string() }, 'must hold user and assistant text'),
  requestId: z.string('must be a non-empty string').min(1, 'must be a non-empty string').max(200),
  /**
   * The exchange's own id (exchangeIdOf, made by the gateway): what its job, its spool file and its
   * extracted facts are named by. The request id is the client's header and may repeat. A gateway
   * from before exchange ids sent none.
   */
  exchangeId: z
    .string()
    .regex(/^[\w.-]{1,200}$/, 'must be 1-200 letters, digits, dots, dashes or underscores')
    .optional(),
});

/** Texts of a pool's active entries that have no vector of `model` yet (hybrid search; the worker embeds them). */
export const VectorsMissingRequestSchema = z.object({ pool, model, limit: limit(64, 2_048) });

export const StoreVectorsRequestSchema = z.object({
  model,
  /** `vector`: little-endian float32s, base64 (see @engram/embeddings vector-codec). */
  vectors: z
    .array(z.object({ hash: z.string().min(1), vector: z.string() }, 'each vector needs a hash and a base64 vector'))
    .max(2_048, 'at most 2048 vectors'),
});

/** The schema of each pattern's request. */
export const MEMORY_REQUESTS = {
  [MemoryPattern.Store]: StoreRequestSchema,
  [MemoryPattern.Search]: SearchRequestSchema,
  [MemoryPattern.List]: ListRequestSchema,
  [MemoryPattern.Page]: PageRequestSchema,
  [MemoryPattern.Get]: GetRequestSchema,
  [MemoryPattern.Update]: UpdateRequestSchema,
  [MemoryPattern.Delete]: IdRequestSchema,
  [MemoryPattern.Purge]: IdRequestSchema,
  [MemoryPattern.Refresh]: RefreshRequestSchema,
  [MemoryPattern.Confirm]: ConfirmRequestSchema,
  [MemoryPattern.Categorize]: CategorizeRequestSchema,
  [MemoryPattern.Archive]: IdRequestSchema,
  [MemoryPattern.Restore]: IdRequestSchema,
  [MemoryPattern.Consolidate]: ConsolidateRequestSchema,
  [MemoryPattern.DecaySweep]: DecaySweepRequestSchema,
  [MemoryPattern.Tier1]: PoolRequestSchema,
  [MemoryPattern.Tier1Plan]: PoolRequestSchema,
  [MemoryPattern.Stats]: NoRequestSchema,
  [MemoryPattern.EventsAfter]: EventsAfterRequestSchema,
  [MemoryPattern.Events]: EventsRequestSchema,
  [MemoryPattern.SpoolExtraction]: SpoolExtractionRequestSchema,
  [MemoryPattern.Ping]: NoRequestSchema,
  [MemoryPattern.VectorsMissing]: VectorsMissingRequestSchema,
  [MemoryPattern.StoreVectors]: StoreVectorsRequestSchema,
} as const;

type Requests = typeof MEMORY_REQUESTS;
/** What a caller sends for `P`. */
export type MemoryRequest<P extends keyof Requests> = z.input<Requests[P]>;
/** What the memory service works with once `P`'s request is parsed. */
export type ParsedRequest<P extends keyof Requests> = z.output<Requests[P]>;

/** Parses `P`'s request; a caller's mistake is MemoryError('invalid_request') naming every field at fault. */
export function parseMemoryRequest<P extends keyof Requests>(pattern: P, request: unknown): ParsedRequest<P> {
  const result = (MEMORY_REQUESTS[pattern] as unknown as z.ZodType<ParsedRequest<P>>).safeParse(request ?? {});
  if (!result.success) throw new MemoryError('invalid_request', describeIssues(result.error));
  return result.data;
}

/** `field: problem; field: problem`, as every surface words a request it refuses. */
export function describeIssues(error: z.ZodError, whole = 'request'): string {
  return error.issues.map((issue) => `${issue.path.join('.') || whole}: ${issue.message}`).join('; ');
}
