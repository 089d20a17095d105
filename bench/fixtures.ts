/** Data the benchmarks share: realistic-looking memory text and a fast way to fill a pool. */
import { join } from 'node:path';
import { EVENT_SCHEMA_VERSION, type NewEvent } from '@engram/domain';
import { EventLog } from '@engram/memory-store';
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

/** Writes a log of `count` store events (plus some references) straight through the EventLog, in big batches. */
export async function writeLog(dataDir: string, count: number): Promise<void> {
  const log = await EventLog.open({ dir: join(dataDir, 'events'), logger: silentLogger() });
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
