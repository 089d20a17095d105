import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { MemoryError, type SpoolExtractionRequest } from '@engram/contracts';
import { fsyncPath } from './fsync.js';
import { invalid, validPool } from './validation.js';

/** An exchange with memory suggestions whose extraction job could not be enqueued yet: what the RPC carried. */
export type SpooledExchange = SpoolExtractionRequest;

export interface ExtractionSpoolLimits {
  /** Exchanges kept at most; past it a new one is refused (the caller logs it as skipped). */
  readonly maxItems: number;
  /** Characters kept of each side of the exchange (the start); suggestions are kept whole. */
  readonly maxExchangeChars: number;
}

const DEFAULT_LIMITS: ExtractionSpoolLimits = { maxItems: 1_000, maxExchangeChars: 16_000 };
const MAX_SUGGESTIONS = 20;
const MAX_SUGGESTION_CHARS = 4_000;

/**
 * Where an exchange waits, on disk, while Redis is down: one fsync'd JSON file per exchange under
 * the data dir, bounded in count and size, taken out once its job is enqueued (job ids derive from
 * the request id, so a file enqueued twice is still one job). Not part of the log: the text is kept
 * only until it is handed on, and a purge removes files that hold the purged text.
 */
export class ExtractionSpool {
  constructor(
    private readonly dir: string,
    private readonly limits: ExtractionSpoolLimits = DEFAULT_LIMITS,
  ) {}

  /** Stores an exchange durably (fsync'd file and directory) before returning. */
  put(request: unknown): void {
    const item = this.valid(request);
    mkdirSync(this.dir, { recursive: true });
    const name = fileName(item.requestId);
    const names = this.names();
    if (names.includes(name)) return;
    if (names.length >= this.limits.maxItems) {
      throw new MemoryError('unavailable', `the extraction spool holds ${names.length} exchanges already; refusing more until Redis is back`);
    }
    const temp = join(this.dir, `${name}.tmp`);
    const fd = openSync(temp, 'w');
    try {
      writeSync(fd, JSON.stringify(item));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, join(this.dir, name));
    fsyncPath(this.dir);
  }

  /** The exchanges waiting (in no particular order), at most `limit`. */
  list(limit = Number.POSITIVE_INFINITY): SpooledExchange[] {
    const items: SpooledExchange[] = [];
    for (const name of this.names()) {
      if (items.length >= limit) break;
      try {
        items.push(JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as SpooledExchange);
      } catch {
        // A file cut short by a crash before its rename never reaches this name; anything else unreadable goes.
        rmSync(join(this.dir, name), { force: true });
      }
    }
    return items;
  }

  remove(requestId: string): void {
    rmSync(join(this.dir, fileName(requestId)), { force: true });
  }

  get size(): number {
    return this.names().length;
  }

  private names(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((name) => name.endsWith('.json'))
        .sort();
    } catch {
      return [];
    }
  }

  private valid(request: unknown): SpooledExchange {
    const data = (request ?? {}) as Partial<Record<keyof SpooledExchange, unknown>>;
    const pool = validPool(data.pool);
    if (typeof data.requestId !== 'string' || data.requestId === '' || data.requestId.length > 200)
      throw invalid('requestId must be a non-empty string');
    if (!Array.isArray(data.suggestions) || data.suggestions.some((suggestion) => typeof suggestion !== 'string')) {
      throw invalid('suggestions must be an array of strings');
    }
    const exchange = (data.exchange ?? {}) as { user?: unknown; assistant?: unknown };
    if (typeof exchange.user !== 'string' || typeof exchange.assistant !== 'string') throw invalid('exchange must hold user and assistant text');
    const cut = (text: string) => text.slice(0, this.limits.maxExchangeChars);
    return {
      pool,
      suggestions: (data.suggestions as string[]).slice(0, MAX_SUGGESTIONS).map((suggestion) => suggestion.slice(0, MAX_SUGGESTION_CHARS)),
      exchange: { user: cut(exchange.user), assistant: cut(exchange.assistant) },
      requestId: data.requestId,
    };
  }
}

function fileName(requestId: string): string {
  return `${createHash('sha256').update(requestId).digest('hex').slice(0, 32)}.json`;
}
