import { createHash } from 'node:crypto';
import { MemoryError, MemoryPattern, StoreRequestSchema, UpdateRequestSchema, describeIssues, memoryFields } from '@engram/contracts';
import type { Actor, MemoryEntry } from '@engram/domain';
import { z } from 'zod';
import type { MemoryPort } from './ports.js';
import { searchResultText } from './search-result-lines.js';
import type { ToolCall, ToolResult, TurnContext } from './turn.js';

/** The memory service answers at most 100 hits; a search for the model needs far fewer. */
const SEARCH_MAX_HITS = 50;

/** An id as the model cites it (`[id:abc]`) or bare. */
const id = z
  .string()
  .trim()
  .min(1)
  .transform((value) => value.replace(/^\[?id:/, '').replace(/\]$/, ''));

// Each tool's arguments are fields of the memory request it makes (their schemas in @engram/contracts),
// with the tool's own: a cited id, a non-empty query, and smaller limits than a person may ask for.
const schemas = {
  store_memory: StoreRequestSchema.pick({ content: true, type: true, category: true }),
  memory_search: z.object({ query: z.string().trim().min(1), limit: z.number().int().min(1).max(20).optional() }),
  memory_list: z.object({ category: memoryFields.category.optional(), limit: z.number().int().min(1).max(50).optional() }),
  memory_update: z.object({ id, ...UpdateRequestSchema.pick({ content: true, category: true, confirmed: true }).shape }),
  memory_delete: z.object({ id, reason: memoryFields.reason }),
  memory_refresh: z.object({ id }),
} as const;

type ToolName = keyof typeof schemas;
type ArgsOf<N extends ToolName> = z.infer<(typeof schemas)[N]>;

/** Who runs the calls: the gateway's loop for the model (`llm`), or an MCP client (`mcp`). */
export type ToolActor = Extract<Actor, 'llm' | 'mcp'>;

/** A call the model got wrong in a way only the memory state shows (no field to change, unknown id). */
class ToolCallError extends Error {}

/**
 * Runs the model's memory calls against the memory service. Every outcome, including bad
 * arguments and an unreachable service, is a readable tool result: a memory call never fails
 * the request. Results cite ids as `[id:abc] content`.
 */
export class MemoryToolExecutor {
  constructor(
    private readonly memory: MemoryPort,
    /** Told after a successful write, so the pool's cached Tier 1 is dropped at once. */
    private readonly onWrite: (pool: string) => void = () => undefined,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async run(call: ToolCall, context: TurnContext, actor: ToolActor = 'llm'): Promise<ToolResult> {
    const { content, isError } = await this.answer(call, context, actor);
    return { callId: call.id, name: call.name, content, isError };
  }

  private async answer(call: ToolCall, context: TurnContext, actor: ToolActor): Promise<{ content: string; isError: boolean }> {
    const failed = (content: string) => ({ content, isError: true });
    if (!(call.name in schemas)) return failed(`Error: ${call.name} is not a memory tool.`);
    const name = call.name as ToolName;
    let raw: unknown;
    try {
      raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch {
      return failed(`Error: the arguments of ${name} are not valid JSON. Call it again with a JSON object.`);
    }
    const parsed = schemas[name].safeParse(raw);
    if (!parsed.success) {
      const problems = describeIssues(parsed.error, 'arguments');
      return failed(`Error: invalid arguments for ${name} (${problems}). Check the tool's schema and call it again.`);
    }
    try {
      return { content: await this.execute(name, parsed.data, context, call.id, actor), isError: false };
    } catch (error) {
      return failed(describeFailure(error));
    }
  }

  private async execute(
    name: ToolName,
    args: ArgsOf<ToolName>,
    { pool, requestId, tier1Ids = [] }: TurnContext,
    callId: string,
    actor: ToolActor,
  ): Promise<string> {
    const meta = { actor, requestId, causationId: requestId };
    switch (name) {
      case 'store_memory': {
        const a = args as ArgsOf<'store_memory'>;
        const entry = await this.memory.call(MemoryPattern.Store, {
          pool,
          // The same call run twice stores once. With the content in the key, two conversations whose
          // model numbers its calls alike (`call_0`) never share an entry unless they store the same text.
          idempotencyKey: `tool-call:${createHash('sha256').update(`${callId}\n${a.content}`).digest('hex')}`,
          content: a.content,
          ...(a.type ? { type: a.type } : {}),
          ...(a.category !== undefined ? { category: a.category } : {}),
          source: 'llm',
          // The model often stores what the pool already says: it gets the entry back instead of a copy.
          dedupe: true,
          ...meta,
        });
        this.onWrite(pool);
        return entry.existing ? `Already known ${cite(entry)}` : `Stored ${cite(entry)}`;
      }
      case 'memory_search': {
        const a = args as ArgsOf<'memory_search'>;
        const limit = a.limit ?? 5;
        const inTier1 = new Set(tier1Ids);
        // Room for the Tier 1 entries that will be left out, so that `limit` new ones can still come back.
        const wanted = Math.min(limit + inTier1.size, SEARCH_MAX_HITS);
        const hits = await this.memory.call(MemoryPattern.Search, { pool, query: a.query, limit: wanted, recordReference: true, actor, requestId });
        return searchResultText(a.query, hits, inTier1, limit, this.clock());
      }
      case 'memory_list': {
        const a = args as ArgsOf<'memory_list'>;
        const entries = await this.memory.call(MemoryPattern.List, {
          pool,
          limit: a.limit ?? 10,
          ...(a.category ? { category: a.category } : {}),
          requestId,
        });
        return entries.length === 0 ? 'No memories yet.' : `${entries.length} memories:\n${entries.map(cite).join('\n')}`;
      }
      case 'memory_update': {
        const a = args as ArgsOf<'memory_update'>;
        if (a.content === undefined && a.category === undefined && a.confirmed === undefined) {
          throw new ToolCallError('Error: memory_update needs at least one of content, category, confirmed.');
        }
        let entry: MemoryEntry | undefined;
        if (a.content !== undefined || a.category !== undefined) {
          entry = await this.memory.call(MemoryPattern.Update, {
            pool,
            id: a.id,
            ...(a.content !== undefined ? { content: a.content } : {}),
            ...(a.category !== undefined ? { category: a.category } : {}),
            ...meta,
          });
        }
        if (a.confirmed !== undefined) {
          entry = await this.memory.call(MemoryPattern.Confirm, { pool, id: a.id, confirmed: a.confirmed, ...meta });
        }
        this.onWrite(pool);
        return `Updated ${cite(entry as MemoryEntry)}`;
      }
      case 'memory_delete': {
        const a = args as ArgsOf<'memory_delete'>;
        const entry = await this.memory.call(MemoryPattern.Delete, { pool, id: a.id, reason: a.reason, ...meta });
        this.onWrite(pool);
        return `Deleted [id:${entry.id}] (archived; a person can restore it).`;
      }
      case 'memory_refresh': {
        const a = args as ArgsOf<'memory_refresh'>;
        const entries = await this.memory.call(MemoryPattern.Refresh, { pool, ids: [a.id], ...meta });
        this.onWrite(pool);
        const entry = entries[0];
        if (!entry) throw new ToolCallError(`Error: no memory with id ${a.id} in this pool.`);
        return `Refreshed ${cite(entry)}`;
      }
    }
  }
}

function cite(entry: MemoryEntry): string {
  return `[id:${entry.id}] ${entry.content}`;
}

function describeFailure(error: unknown): string {
  if (error instanceof ToolCallError) return error.message;
  if (error instanceof MemoryError) {
    switch (error.code) {
      case 'not_found':
        return `Error: ${error.message}. Use an id from a [id:...] citation.`;
      case 'invalid_request':
      case 'conflict':
        return `Error: ${error.message}.`;
      case 'gone':
        return `Not stored: ${error.message}. A person removed it from memory; do not store it again.`;
      case 'unavailable':
        return 'Error: memory is unavailable right now. Answer without it.';
      default:
        return 'Error: memory failed on this call. Answer without it.';
    }
  }
  return 'Error: memory failed on this call. Answer without it.';
}
