// The wire types only (tsconfig maps @engram/contracts to its messages file: the entry point also holds Node-side code).
import type { StatsResponse, Tier1PlanResponse } from '@engram/contracts';
import type { Category, MemoryEntry, MemoryEvent, MemorySource, MemoryType } from '@engram/domain';

const KEY_STORAGE = 'engram.key';

/** The Engram key for this browser tab: asked once, kept in sessionStorage (gone when the tab closes). */
export const session = {
  key(): string | null {
    return sessionStorage.getItem(KEY_STORAGE);
  },
  setKey(key: string): void {
    sessionStorage.setItem(KEY_STORAGE, key);
  },
  clear(): void {
    sessionStorage.removeItem(KEY_STORAGE);
  },
};

/** An answer of the REST API other than 2xx, with its OpenAI-shaped message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Told when the API says the key is missing or wrong, so the app can ask for one. */
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  const key = session.key();
  if (key) headers['authorization'] = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await response.text();
  const json = text ? (JSON.parse(text) as unknown) : undefined;
  if (!response.ok) {
    if (response.status === 401) onUnauthorized();
    const message = (json as { error?: { message?: string } } | undefined)?.error?.message ?? `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, message);
  }
  return json as T;
}

/** A pool as `GET /engram/pools` lists it: memory's stats, plus its Tier 1 block's size. */
export type PoolSummary = StatsResponse['pools'][number] & {
  readonly tier1: { readonly chars: number; readonly ids: number; readonly tokens: number };
};

export type ListedEntry = MemoryEntry & { readonly effectiveConfidence: number; readonly score?: number };

export interface MemoryFilters {
  readonly q?: string;
  readonly type?: MemoryType;
  readonly category?: Category;
  readonly confirmed?: boolean;
  readonly archived?: boolean;
  readonly source?: MemorySource;
  readonly sort?: 'created' | 'last_used' | 'confidence';
}

/** `GET .../tier1?explain=true`: memory's plan, plus the block's size and its share of each request. */
export type Tier1Plan = Tier1PlanResponse & {
  readonly chars: number;
  /** o200k tokens the block adds to the system message, and with the memory tools: each request's memory share. */
  readonly tokens: number;
  readonly promptTokens: number;
};

const poolPath = (pool: string) => `/engram/pools/${encodeURIComponent(pool)}`;

export const api = {
  pools: () => request<{ data: PoolSummary[] }>('GET', '/engram/pools'),
  memories(pool: string, filters: MemoryFilters, cursor: string | null, limit = 100) {
    const query = new URLSearchParams({ limit: String(limit) });
    for (const [name, value] of Object.entries(filters)) if (value !== undefined && value !== '') query.set(name, String(value));
    if (cursor) query.set('cursor', cursor);
    return request<{ data: ListedEntry[]; nextCursor: string | null }>('GET', `${poolPath(pool)}/memories?${query}`);
  },
  memory: (pool: string, id: string) => request<MemoryEntry>('GET', `${poolPath(pool)}/memories/${encodeURIComponent(id)}`),
  create: (pool: string, body: { content: string; type?: MemoryType; category?: Category | null }) =>
    request<MemoryEntry>('POST', `${poolPath(pool)}/memories`, body),
  update: (pool: string, id: string, body: { content?: string; category?: Category | null; confirmed?: boolean; archived?: boolean }) =>
    request<MemoryEntry>('PATCH', `${poolPath(pool)}/memories/${encodeURIComponent(id)}`, body),
  purge: (pool: string, id: string) => request<unknown>('DELETE', `${poolPath(pool)}/memories/${encodeURIComponent(id)}?purge=true`),
  tier1: (pool: string) => request<Tier1Plan>('GET', `${poolPath(pool)}/tier1?explain=true`),
  /** Events after a seq (or from a cursor), oldest first; `memoryId` narrows them to one entry's. */
  events(pool: string, from: { after: number } | { cursor: string }, memoryId?: string) {
    const query = new URLSearchParams({ limit: '1000' });
    if ('cursor' in from) query.set('cursor', from.cursor);
    else query.set('after', String(from.after));
    if (memoryId) query.set('memoryId', memoryId);
    return request<{ data: MemoryEvent[]; nextCursor: string | null }>('GET', `${poolPath(pool)}/events?${query}`);
  },
};

/** Every event about this entry (stored, used, edited, merged into another, ...), oldest first. */
export async function historyOf(pool: string, id: string): Promise<MemoryEvent[]> {
  const found: MemoryEvent[] = [];
  let page = await api.events(pool, { after: 0 }, id);
  found.push(...page.data);
  while (page.nextCursor) {
    page = await api.events(pool, { cursor: page.nextCursor }, id);
    found.push(...page.data);
  }
  return found;
}
