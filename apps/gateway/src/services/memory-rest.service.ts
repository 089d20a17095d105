import { Inject, Injectable } from '@nestjs/common';
import {
  IDEMPOTENCY_KEY_PATTERN,
  MemoryError,
  MemoryPattern,
  PAGE_MAX_LIMIT,
  PAGE_SORTS,
  StoreRequestSchema,
  UpdateRequestSchema,
  describeIssues,
  memoryFields,
  type EventsPage,
  type MemoryClient,
  type MemoryContract,
  type MemoryErrorCode,
} from '@engram/contracts';
import {
  EngramHttpError,
  MEMORY_TOOLS,
  clientError,
  memoryPromptTokens,
  type MemoryToolDefinition,
  type PoolGrant,
  type GatewayTier1Cache,
} from '@engram/gateway-engine';
import { z } from 'zod';
import { MEMORY_CLIENT, OFFERED_TOOLS, TIER1_CACHE } from '../gateway.tokens.js';

// The bodies are the memory requests' own fields (their schemas in @engram/contracts), and nothing else.
const CreateBody = StoreRequestSchema.pick({ content: true, type: true, category: true }).strict();
const UpdateBody = UpdateRequestSchema.pick({ content: true, type: true, category: true, confirmed: true })
  .extend({ archived: z.boolean().optional() })
  .strict();
// A query string holds only text: its flags and numbers are read here, the fields' values checked by the memory schemas.
const flag = z.enum(['true', 'false']).transform((value) => value === 'true');
const ListQuery = z.object({
  q: z.string().optional(),
  category: memoryFields.category.optional(),
  type: memoryFields.type.optional(),
  confirmed: flag.optional(),
  archived: flag.optional(),
  source: memoryFields.source.optional(),
  sort: z.enum(PAGE_SORTS).optional(),
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(PAGE_MAX_LIMIT).optional(),
});
const IdempotencyKey = z
  .string('Idempotency-Key must be given once')
  .regex(IDEMPOTENCY_KEY_PATTERN, 'Idempotency-Key must be 1-255 printable ASCII characters without spaces');
const EventsQuery = z.object({
  after: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  cursor: z.string().min(1).max(64).optional(),
  memoryId: z.string().min(1).max(64).optional(),
});
const Tier1Query = z.object({ explain: flag.optional() });
const CreateQuery = z.object({ dedupe: flag.optional() });
/** A search answers its best matches, not a listing to page through. */
const SEARCH_MAX_LIMIT = 100;

const STATUS_OF: Readonly<Record<MemoryErrorCode, number>> = {
  not_found: 404,
  invalid_request: 400,
  conflict: 409,
  idempotency_key_reused: 422,
  // An Idempotency-Key whose entry was purged: the key names that request, whose entry is gone for good.
  gone: 410,
  unavailable: 503,
  // The gateway's own internal token was refused: nothing the caller can fix, and memory is out of reach.
  unauthorized: 503,
  internal: 500,
};

const TYPE_OF = (code: MemoryErrorCode): string =>
  code === 'unavailable' || code === 'unauthorized' ? 'service_unavailable' : code === 'internal' ? 'server_error' : 'invalid_request_error';

/** Memory REST for people, the CLI and a UI: the same memory service, actor `user`. */
@Injectable()
export class MemoryRestService {
  constructor(
    @Inject(MEMORY_CLIENT) private readonly memory: Pick<MemoryClient, 'call'>,
    @Inject(TIER1_CACHE) private readonly cache: GatewayTier1Cache,
    /** The memory tools each request is offered (none when MEMORY_TOOL_MAX_ITERATIONS is 0), for `promptTokens`. */
    @Inject(OFFERED_TOOLS) private readonly offeredTools: readonly MemoryToolDefinition[] = MEMORY_TOOLS,
  ) {}

  /**
   * Without `q`: one keyset page of the pool (`nextCursor` for the next). With `q`: the search the
   * model uses (same ranking, no reference recorded), its best matches narrowed by the filters;
   * there `archived=true` searches archived entries too, as it always has.
   */
  async list(pool: string, query: unknown, requestId: string): Promise<{ data: unknown[]; nextCursor: string | null }> {
    const q = parse(ListQuery, query);
    if (q.q !== undefined && q.q.trim() !== '') {
      const hits = await this.call(MemoryPattern.Search, {
        pool,
        query: q.q,
        ...(q.category ? { category: q.category } : {}),
        ...(q.archived ? { includeArchived: true } : {}),
        ...(q.limit ? { limit: Math.min(q.limit, SEARCH_MAX_LIMIT) } : {}),
        recordReference: false,
        requestId,
      });
      const data = hits
        .filter(({ entry }) => q.type === undefined || entry.type === q.type)
        .filter(
          ({ entry }) => (q.confirmed === undefined || entry.isConfirmed === q.confirmed) && (q.source === undefined || entry.source === q.source),
        )
        .map((hit) => ({ ...hit.entry, score: hit.score, effectiveConfidence: hit.effectiveConfidence }));
      return { data, nextCursor: null };
    }
    const page = await this.call(MemoryPattern.Page, {
      pool,
      ...(q.sort ? { sort: q.sort } : {}),
      ...(q.category ? { category: q.category } : {}),
      ...(q.type ? { type: q.type } : {}),
      ...(q.confirmed !== undefined ? { confirmed: q.confirmed } : {}),
      ...(q.archived !== undefined ? { archived: q.archived } : {}),
      ...(q.source ? { source: q.source } : {}),
      ...(q.cursor ? { cursor: q.cursor } : {}),
      ...(q.limit ? { limit: q.limit } : {}),
      requestId,
    });
    return { data: [...page.data], nextCursor: page.nextCursor };
  }

  /**
   * Every pool a key reaches: those with entries or events (all of them for a `*` key or in open
   * mode) and the key's granted ones, with counts, the last change and the size of the Tier 1 block
   * (characters, and o200k tokens it adds to the system message).
   */
  async pools(grant: PoolGrant, requestId: string): Promise<{ data: unknown[] }> {
    const stats = await this.call(MemoryPattern.Stats, {});
    const known = new Map(stats.pools.map((pool) => [pool.pool, pool]));
    const names = grant.all ? [...known.keys()] : [...grant.pools];
    const data = await Promise.all(
      names.map(async (name) => {
        const pool = known.get(name) ?? { pool: name, active: 0, archived: 0, byCategory: {}, lastSeq: 0, lastChangedAt: null };
        const tier1 = await this.call(MemoryPattern.Tier1, { pool: name, requestId });
        return { ...pool, tier1: { chars: tier1.block.length, tokens: await memoryPromptTokens(tier1.block, []), ids: tier1.ids.length } };
      }),
    );
    return { data: data.sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0)) };
  }

  get(pool: string, id: string): Promise<unknown> {
    return this.call(MemoryPattern.Get, { pool, id });
  }

  /**
   * With an `Idempotency-Key`, a retry returns the entry the first attempt stored (even one that timed out);
   * the same key with a different body is a 422 (`idempotency_key_reused`).
   * With `?dedupe=true`, an active entry that already says it is answered (`existing: true`) instead of a
   * second copy; without, what a person sent is stored as sent.
   */
  async create(pool: string, body: unknown, query: unknown, requestId: string, idempotencyKey?: string | string[]): Promise<unknown> {
    const b = parse(CreateBody, body);
    const { dedupe } = parse(CreateQuery, query);
    const key = idempotencyKey === undefined ? undefined : parse(IdempotencyKey, idempotencyKey);
    const entry = await this.call(MemoryPattern.Store, {
      pool,
      ...(key !== undefined ? { idempotencyKey: key, idempotencyKeyBindsRequest: true } : {}),
      content: b.content,
      ...(b.type ? { type: b.type } : {}),
      ...(b.category !== undefined ? { category: b.category } : {}),
      ...(dedupe ? { dedupe } : {}),
      source: 'user',
      actor: 'user',
      requestId,
      causationId: requestId,
    });
    this.cache.evict(pool);
    return entry;
  }

  async update(pool: string, id: string, body: unknown, requestId: string): Promise<unknown> {
    const b = parse(UpdateBody, body);
    const meta = { pool, id, actor: 'user' as const, requestId, causationId: requestId };
    let entry: unknown;
    if (b.content !== undefined || b.category !== undefined || b.type !== undefined) {
      entry = await this.call(MemoryPattern.Update, {
        ...meta,
        ...(b.content !== undefined ? { content: b.content } : {}),
        ...(b.category !== undefined ? { category: b.category } : {}),
        ...(b.type !== undefined ? { type: b.type } : {}),
      });
    }
    if (b.confirmed !== undefined) entry = await this.call(MemoryPattern.Confirm, { ...meta, confirmed: b.confirmed });
    if (b.archived === true) entry = await this.call(MemoryPattern.Archive, { ...meta, reason: 'archived by a person' });
    if (b.archived === false) entry = await this.call(MemoryPattern.Restore, meta);
    if (entry === undefined) entry = await this.call(MemoryPattern.Get, { pool, id });
    this.cache.evict(pool);
    return entry;
  }

  async remove(pool: string, id: string, purge: boolean, requestId: string): Promise<unknown> {
    const meta = { pool, id, actor: 'user' as const, requestId, causationId: requestId };
    const result = purge
      ? await this.call(MemoryPattern.Purge, meta)
      : await this.call(MemoryPattern.Delete, { ...meta, reason: 'deleted by a person' });
    this.cache.evict(pool);
    return result;
  }

  /** The pool's Tier 1 block, and `promptTokens`: what the block plus the memory tools add to each upstream request. */
  async tier1(pool: string, requestId: string): Promise<unknown> {
    const tier1 = await this.call(MemoryPattern.Tier1, { pool, requestId });
    return { ...tier1, promptTokens: await memoryPromptTokens(tier1.block, this.offeredTools) };
  }

  /** `?explain=true`: the block as injected plus why each active entry is or is not in it (else plain tier1). */
  async tier1WithQuery(pool: string, query: unknown, requestId: string): Promise<unknown> {
    if (!parse(Tier1Query, query).explain) return this.tier1(pool, requestId);
    const plan = await this.call(MemoryPattern.Tier1Plan, { pool, requestId });
    const [tokens, promptTokens] = await Promise.all([memoryPromptTokens(plan.block, []), memoryPromptTokens(plan.block, this.offeredTools)]);
    return { ...plan, chars: plan.block.length, tokens, promptTokens };
  }

  /** A page of the pool's events (or of one entry's history, `memoryId`), oldest first, with the cursor of the next. */
  events(pool: string, query: unknown, requestId: string): Promise<EventsPage> {
    const q = parse(EventsQuery, query);
    return this.call(MemoryPattern.Events, {
      pool,
      after: q.after,
      ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
      ...(q.limit !== undefined ? { limit: q.limit } : {}),
      ...(q.memoryId !== undefined ? { memoryId: q.memoryId } : {}),
      requestId,
    });
  }

  private async call<P extends keyof MemoryContract>(pattern: P, request: MemoryContract[P][0]): Promise<MemoryContract[P][1]> {
    try {
      return await this.memory.call(pattern, request);
    } catch (error) {
      if (error instanceof MemoryError) throw httpErrorOf(error);
      throw error;
    }
  }
}

/** Memory's answer as the HTTP error a person can act on. */
export function httpErrorOf(error: MemoryError): EngramHttpError {
  return new EngramHttpError(STATUS_OF[error.code], error.message, TYPE_OF(error.code), error.code);
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value ?? {});
  if (!result.success) {
    throw clientError(400, describeIssues(result.error, 'body'), 'invalid_request');
  }
  return result.data;
}
