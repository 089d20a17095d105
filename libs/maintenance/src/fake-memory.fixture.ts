import { MemoryError, MemoryPattern, type ConsolidateRequest, type MemoryContract, type StoreRequest } from '@engram/contracts';
import type { Category, MemoryEntry, MemoryEvent, NewEvent } from '@engram/domain';
import { memoryEntry } from '@engram/testing';
import type { MaintenancePattern, MemoryPort } from './ports.js';

/** An entry as the memory service would hold it, with the given fields (pool `team`). */
export function entry(fields: Partial<MemoryEntry> & Pick<MemoryEntry, 'id'>): MemoryEntry {
  return memoryEntry(fields.id, { pool: 'team', createdAt: '2026-11-01T00:00:00.000Z', updatedAt: '2026-11-01T00:00:00.000Z', ...fields });
}

type EventDraft = Pick<NewEvent, 'type' | 'pool' | 'actor' | 'causationId'> & { data: unknown };

/**
 * A typed fake of the memory port: an in-process map with the service's observable rules (refuses
 * archived ids in Consolidate, answers not_found, keeps a log). Only for handler unit tests.
 */
export class FakeMemory implements MemoryPort {
  readonly entries = new Map<string, MemoryEntry>();
  readonly log: MemoryEvent[] = [];
  readonly calls: { pattern: MaintenancePattern; request: unknown }[] = [];
  /** Texts a purge forbade (compared in lower case): a store of one from a conversation is refused as `gone`. */
  readonly purgedTexts = new Set<string>();
  private nextId = 1;

  constructor(
    initial: readonly MemoryEntry[] = [],
    private readonly now: () => string = () => '2026-12-01T12:00:00.000Z',
  ) {
    for (const item of initial) this.entries.set(item.id, item);
  }

  writes(): { pattern: MaintenancePattern; request: unknown }[] {
    const reads: MaintenancePattern[] = [MemoryPattern.Get, MemoryPattern.List, MemoryPattern.Stats, MemoryPattern.EventsAfter];
    return this.calls.filter((call) => !reads.includes(call.pattern));
  }

  active(pool = 'team'): MemoryEntry[] {
    return [...this.entries.values()].filter((item) => item.pool === pool && !item.isArchived);
  }

  async call<P extends MaintenancePattern>(pattern: P, request: MemoryContract[P][0]): Promise<MemoryContract[P][1]> {
    this.calls.push({ pattern, request });
    return this.handle(pattern, request) as MemoryContract[P][1];
  }

  private emit(draft: EventDraft): void {
    const seq = this.log.length + 1;
    this.log.push({ ...draft, seq, id: `ev-${seq}`, at: this.now(), schemaVersion: 1 } as MemoryEvent);
  }

  private get(pool: string, id: string): MemoryEntry {
    const found = this.entries.get(id);
    if (!found || found.pool !== pool) throw new MemoryError('not_found', `no memory ${id} in ${pool}`);
    return found;
  }

  private update(id: string, fields: Partial<MemoryEntry>): MemoryEntry {
    const updated = { ...(this.entries.get(id) as MemoryEntry), ...fields, updatedAt: this.now() };
    this.entries.set(id, updated);
    return updated;
  }

  private handle(pattern: MaintenancePattern, request: unknown): unknown {
    switch (pattern) {
      case MemoryPattern.Get: {
        const { pool, id } = request as MemoryContract[typeof MemoryPattern.Get][0];
        return this.get(pool, id);
      }
      case MemoryPattern.List: {
        const { pool, archived, limit = 50, offset = 0 } = request as MemoryContract[typeof MemoryPattern.List][0];
        return [...this.entries.values()]
          .filter((item) => item.pool === pool && (archived === undefined || item.isArchived === archived))
          .slice(offset, offset + Math.min(limit, 1000));
      }
      case MemoryPattern.Stats: {
        const pools = [...new Set([...this.entries.values()].map((item) => item.pool))];
        return {
          lastSeq: this.log.length,
          pools: pools.map((pool) => ({
            pool,
            active: this.active(pool).length,
            archived: 0,
            byCategory: {},
            lastSeq: this.log.length,
            lastChangedAt: null,
          })),
        };
      }
      case MemoryPattern.EventsAfter: {
        const { after, pool, limit } = request as MemoryContract[typeof MemoryPattern.EventsAfter][0];
        return this.log.filter((event) => event.seq > after && (!pool || event.pool === pool)).slice(0, limit ?? 1000);
      }
      case MemoryPattern.Store: {
        const store = request as StoreRequest & { id?: string };
        const id = store.id ?? `m${this.nextId++}`;
        const existing = this.entries.get(id);
        if (existing) return existing;
        if (this.purgedTexts.has(store.content.toLowerCase()) && store.source !== 'user') {
          throw new MemoryError('gone', 'this text was purged from the pool; it is not stored again from a conversation');
        }
        const created = entry({
          id,
          pool: store.pool,
          content: store.content,
          type: store.type ?? 'MEMORY',
          category: store.category ?? null,
          source: store.source ?? 'llm',
          createdAt: this.now(),
          updatedAt: this.now(),
        });
        this.entries.set(id, created);
        this.emit({ type: 'memory.stored', pool: store.pool, actor: store.actor, causationId: store.causationId ?? null, data: { id } });
        return created;
      }
      case MemoryPattern.Refresh: {
        const { pool, ids, actor, causationId } = request as MemoryContract[typeof MemoryPattern.Refresh][0];
        const refreshed = ids.map((id) => {
          const current = this.get(pool, id);
          return this.update(id, { lastReferenced: this.now(), referenceCount: current.referenceCount + 1 });
        });
        this.emit({ type: 'memory.referenced', pool, actor, causationId: causationId ?? null, data: { ids } });
        return refreshed;
      }
      case MemoryPattern.Categorize: {
        const { pool, id, category, actor, causationId } = request as MemoryContract[typeof MemoryPattern.Categorize][0];
        this.get(pool, id);
        this.emit({ type: 'memory.categorized', pool, actor, causationId: causationId ?? null, data: { id, category } });
        return this.update(id, { category: category as Category });
      }
      case MemoryPattern.DecaySweep:
        throw new Error('the decay sweep runs against the real memory service (tests/medium/worker-handlers)');
      case MemoryPattern.Consolidate: {
        const { pool, merges, actor, causationId, model } = request as ConsolidateRequest;
        for (const merge of merges) {
          for (const id of merge.supersedes) {
            if (this.get(pool, id).isArchived) throw new MemoryError('conflict', `${id} is archived`);
          }
        }
        const created: MemoryEntry[] = [];
        const archived: string[] = [];
        for (const merge of merges) {
          const id = `c${this.nextId++}`;
          const made = entry({ ...merge, id, pool, source: 'consolidation', supersedes: merge.supersedes, createdAt: this.now() });
          this.entries.set(id, made);
          this.emit({
            type: 'memory.consolidated',
            pool,
            actor,
            causationId: causationId ?? null,
            data: { id, model, supersedes: merge.supersedes },
          });
          for (const old of merge.supersedes) this.update(old, { isArchived: true, supersededBy: id });
          created.push(made);
          archived.push(...merge.supersedes);
        }
        return { created, archived };
      }
      default: {
        const unreachable: never = pattern;
        throw new Error(`fake memory does not serve ${String(unreachable)}`);
      }
    }
  }
}

/** An upstream that answers from a script, one answer (or error) per call. */
export class ScriptedLlm {
  readonly requests: { model: string; messages: readonly { role: string; content: string }[] }[] = [];
  constructor(private readonly answers: (string | Error)[]) {}

  async complete(request: { model: string; messages: readonly { role: string; content: string }[]; json: boolean }): Promise<string> {
    this.requests.push({ model: request.model, messages: [...request.messages] });
    const next = this.answers.shift();
    if (next === undefined) throw new Error('script exhausted');
    if (next instanceof Error) throw next;
    return next;
  }
}
