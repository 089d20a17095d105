/** Data the benchmarks share: realistic-looking memory text and a fast way to fill a pool. */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { EVENT_SCHEMA_VERSION, type NewEvent } from '@engram/domain';
import { EventLog, plainEventCodec, type EventCodec } from '@engram/memory-store';
import { silentLogger } from '@engram/testing';

export const WORDS = (
  'build deploy docker redis sqlite postgres node typescript react vite jest vitest lint format prettier eslint ' +
  'pnpm npm yarn turbo nx monorepo gateway memory worker queue cache index search token model prompt stream ' +
  'shell zsh bash fish macos linux windows wsl terminal editor vim emacs vscode cursor warp opencode codex claude ' +
  'prefers concise direct feedback bullet points tests first small commits review branch main release tag ' +
  'kubernetes helm terraform ansible nginx caddy traefik grafana prometheus loki sentry datadog github gitlab ' +
  'python rust golang java kotlin swift ruby rails django flask fastapi express nest fastify hono bun deno'
).split(' ');

/** A deterministic pseudo-random sentence; word frequencies are skewed like real text (Zipf-like). */
export function sentence(seed: number): string {
  let x = (seed + 1) * 2654435761;
  const words: string[] = [];
  for (let i = 0; i < 12; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    const skewed = Math.floor((x / 2 ** 32) ** 2 * WORDS.length);
    words.push(WORDS[skewed] ?? 'memory');
  }
  return `Entry ${seed}: ${words.join(' ')}`;
}

/** A query of two vocabulary words, varied by `i`. */
export function query(i: number): string {
  return `${WORDS[(i * 13) % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]}`;
}

/**
 * Writes a log of `count` store events (plus some references) straight through the EventLog, in big
 * batches; `codec` sealed for an encrypted data dir (its marker written first, see encryption.bench.ts).
 */
export async function writeLog(dataDir: string, count: number, codec: EventCodec = plainEventCodec): Promise<void> {
  const log = await EventLog.open({ codec, dir: join(dataDir, 'events'), logger: silentLogger() });
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  for (let start = 0; start < count; start += 5_000) {
    const batch: NewEvent[] = [];
    for (let i = start; i < Math.min(count, start + 5_000); i++) {
      const at = new Date(base + i * 1_000).toISOString();
      const meta = { at, pool: 'bench', actor: 'user', causationId: null, schemaVersion: EVENT_SCHEMA_VERSION } as const;
      batch.push(
        i % 10 === 9
          ? { ...meta, type: 'memory.referenced', id: `ev${i}`, data: { ids: [`m${i - 1}`, `m${i - 5}`] } }
          : {
              ...meta,
              type: 'memory.stored',
              id: `ev${i}`,
              data: {
                id: `m${i}`,
                type: 'MEMORY',
                category: i % 3 === 0 ? 'project' : 'environment',
                content: sentence(i),
                confidence: 0.5 + (i % 50) / 100,
                source: 'llm',
              },
            },
      );
    }
    await log.append(batch);
  }
  await log.close();
}

/** A memory-length text (~28 words, ~190 characters): two of `sentence`'s word runs, without their "Entry N:" prefix. */
export function memoryText(seed: number): string {
  return `${sentence(seed).replace(/^Entry \d+: /, '')} and ${sentence(seed + 7919).replace(/^Entry \d+: /, '')} (${seed})`;
}

/**
 * A year of a heavy user in one pool, as the memory service logs it, in batches of about `batchSize`
 * events: 2,000 entries stored, 3,000 other writes to them (1,500 edits with new text, 1,000
 * confirmations, 500 archives), and 100,000 searches (one every ~5 minutes), each recording a
 * reference to the 1-10 entries it returned (popular entries more often). Ids as the service makes
 * them (10-character entries, UUID events and causes).
 */
export function* heavyUserYear(batchSize = 200): Generator<NewEvent[]> {
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const yearMs = 365 * 86_400_000;
  const searches = 100_000;
  const writes = 5_000;
  const total = searches + writes;
  let random = 42;
  const next = () => {
    random = (random * 1103515245 + 12345) >>> 0;
    return random / 2 ** 32;
  };
  const uuid = () => randomUUID();
  const id = (n: number) => `e${String(n).padStart(9, '0')}`;
  let stored = 0;
  let writesDone = 0;
  let batch: NewEvent[] = [];
  for (let i = 0; i < total; i += 1) {
    const at = new Date(start + (i * yearMs) / total).toISOString();
    const meta = { id: uuid(), at, pool: 'heavy', causationId: uuid(), schemaVersion: EVENT_SCHEMA_VERSION } as const;
    // Writes spread over the year: the first 2,000 are stores, the rest change stored entries.
    const isWrite = writesDone < Math.round(((i + 1) * writes) / total);
    if (isWrite) {
      writesDone += 1;
      if (stored < 2_000) {
        const data = { id: id(stored), type: 'MEMORY', category: 'project', content: memoryText(stored), confidence: 0.8, source: 'llm' } as const;
        batch.push({ ...meta, type: 'memory.stored', actor: 'llm', data });
        stored += 1;
      } else {
        const target = id(Math.floor(next() * stored));
        const kind = writesDone % 6;
        if (kind < 3) batch.push({ ...meta, type: 'memory.updated', actor: 'user', data: { id: target, content: memoryText(writesDone + 10_000) } });
        else if (kind < 5) batch.push({ ...meta, type: 'memory.confirmed', actor: 'user', data: { id: target, confirmed: true } });
        else batch.push({ ...meta, type: 'memory.archived', actor: 'worker:decay', data: { id: target, reason: 'decayed' } });
      }
    } else if (stored > 0) {
      const hits = 1 + Math.floor(next() * 10);
      const ids = new Set<string>();
      for (let h = 0; h < hits; h += 1) ids.add(id(Math.floor(next() ** 2 * stored)));
      batch.push({ ...meta, type: 'memory.referenced', actor: 'llm', data: { ids: [...ids] } });
    }
    if (batch.length >= batchSize) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
