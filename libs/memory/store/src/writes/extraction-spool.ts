import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { AtRestFileError, type EncryptionKey, openFile, sealFile, UnsealError } from '@engram/config';
import { MemoryError, MemoryPattern, parseMemoryRequest, type SpoolExtractionRequest } from '@engram/contracts';
import { exchangeIdOf } from '@engram/jobs';
import { fsyncPath } from '../event-log/fsync.js';
import { isOutOfSpace, messageOf } from '../data-dir/out-of-space.js';

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
 * the data dir, bounded in count and size, taken out once its job is enqueued (files and job ids derive
 * from the exchange id, so a file enqueued twice is still one job, and two exchanges that share a
 * client's request id are two files). Not part of the log: the text is kept
 * only until it is handed on, and a purge removes files that hold the purged text. With an at-rest
 * key each file is sealed (its name as associated data).
 */
export class ExtractionSpool {
  constructor(
    private readonly dir: string,
    private readonly limits: ExtractionSpoolLimits = DEFAULT_LIMITS,
    private readonly key: EncryptionKey | null = null,
  ) {}

  /** Stores an exchange durably (fsync'd file and directory) before returning. */
  put(request: unknown): void {
    const item = this.valid(request);
    mkdirSync(this.dir, { recursive: true });
    const name = fileName(item.exchangeId);
    const names = this.names();
    if (names.includes(name)) return;
    if (names.length >= this.limits.maxItems) {
      throw new MemoryError('unavailable', `the extraction spool holds ${names.length} exchanges already; refusing more until Redis is back`);
    }
    const temp = join(this.dir, `${name}.tmp`);
    try {
      const fd = openSync(temp, 'w');
      try {
        // A write that finds too little room writes what fits and says so; only the next one fails.
        const bytes = sealFile(Buffer.from(JSON.stringify(item)), this.key, place(name));
        for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, join(this.dir, name));
      fsyncPath(this.dir);
    } catch (error) {
      // A part of the exchange left on disk would hold its text where a purge does not look.
      rmSync(temp, { force: true });
      if (isOutOfSpace(error)) {
        throw new MemoryError('unavailable', `the data disk is full (${messageOf(error)}): the exchange was not kept for extraction`);
      }
      throw error;
    }
  }

  /** The exchanges waiting (in no particular order), at most `limit`. */
  list(limit = Number.POSITIVE_INFINITY): SpooledExchange[] {
    const items: SpooledExchange[] = [];
    for (const name of this.names()) {
      if (items.length >= limit) break;
      try {
        const item = JSON.parse(openFile(readFileSync(join(this.dir, name)), this.key, place(name)).toString('utf8')) as Omit<
          SpooledExchange,
          'exchangeId'
        > & { exchangeId?: string };
        // Kept before exchanges had ids: its file is named by the request id, which stands in for one.
        items.push({ ...item, exchangeId: item.exchangeId ?? item.requestId });
      } catch (error) {
        // Sealed with another key, or not as the key says: kept for a person to look at, never deleted.
        if (error instanceof AtRestFileError || error instanceof UnsealError) continue;
        // A file cut short by a crash before its rename never reaches this name; anything else unreadable goes.
        rmSync(join(this.dir, name), { force: true });
      }
    }
    return items;
  }

  /** Takes out the exchange of this id (a listed item's `exchangeId`). */
  remove(exchangeId: string): void {
    rmSync(join(this.dir, fileName(exchangeId)), { force: true });
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

  /** The request as parsed, cut to the spool's bounds. */
  private valid(request: unknown): SpooledExchange {
    const data = parseMemoryRequest(MemoryPattern.SpoolExtraction, request);
    const cut = (text: string) => text.slice(0, this.limits.maxExchangeChars);
    const kept = {
      pool: data.pool,
      suggestions: data.suggestions.slice(0, MAX_SUGGESTIONS).map((suggestion) => suggestion.slice(0, MAX_SUGGESTION_CHARS)),
      exchange: { user: cut(data.exchange.user), assistant: cut(data.exchange.assistant) },
      requestId: data.requestId,
    };
    // The gateway names the exchange (a gateway from before exchange ids did not: named here then, the same way).
    return { ...kept, exchangeId: data.exchangeId ?? exchangeIdOf({ ...kept, exchange: data.exchange }) };
  }
}

/** What a spool file's sealed bytes are bound to. */
function place(name: string): string {
  return `spool/extract/${name}`;
}

function fileName(exchangeId: string): string {
  return `${createHash('sha256').update(exchangeId).digest('hex').slice(0, 32)}.json`;
}
