import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from '@jest/globals';
import { CATEGORIES, INITIAL_MEMORY_STATE, evolve, type Category, type MemoryEntry } from '@engram/domain';
import { compareEntries } from './entry-equality.js';
import { plainEventCodec } from '../event-log/event-codec.js';
import { EventLog } from '../event-log/event-log.js';
import type { MemoryService } from '../writes/memory-service.js';
import { catchUp, openMemoryService } from './open-memory-service.js';
import { Projection } from '../projection/projection.js';
import { verifyDataDir } from './rebuild.js';
import { silentLogger, tempDataDir } from '@engram/testing';

type Op =
  | { kind: 'store'; pool: number; content: string; category: Category | null }
  | { kind: 'update'; target: number; content: string | null; category: Category | null | undefined; confirmed: boolean | undefined }
  | { kind: 'delete' | 'archive' | 'restore' | 'purge' | 'refresh'; target: number }
  | { kind: 'confirm'; target: number; confirmed: boolean }
  | { kind: 'categorize'; target: number; category: Category }
  | { kind: 'consolidate'; targets: [number, number]; content: string }
  | { kind: 'search'; pool: number; query: string };

const word = fc.constantFrom('docker', 'zsh', 'tabs', 'postgres', 'deploy', 'ana', 'café', '🎉', '"quoted"', 'NEAR', 'AND');
const text = fc.array(word, { minLength: 1, maxLength: 5 }).map((words) => words.join(' '));
const category = fc.option(fc.constantFrom(...CATEGORIES), { nil: null });
const target = fc.nat({ max: 30 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('store' as const), pool: fc.nat({ max: 1 }), content: text, category }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('update' as const),
      target,
      content: fc.option(text, { nil: null }),
      category: fc.option(category, { nil: undefined }),
      confirmed: fc.option(fc.boolean(), { nil: undefined }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom('delete' as const, 'archive' as const, 'restore' as const, 'purge' as const, 'refresh' as const),
      target,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('confirm' as const), target, confirmed: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('categorize' as const), target, category: fc.constantFrom(...CATEGORIES) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('consolidate' as const), targets: fc.tuple(target, target), content: text }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('search' as const), pool: fc.nat({ max: 1 }), query: text }) },
);

const POOLS = ['alpha', 'beta'];

async function run(service: MemoryService, ids: string[], operation: Op): Promise<void> {
  const pick = (index: number) => ids[index % Math.max(1, ids.length)] ?? 'missing1';
  const poolOf = async (id: string) => {
    for (const pool of POOLS)
      if (
        await service.get({ pool, id }).then(
          () => true,
          () => false,
        )
      )
        return pool;
    return 'alpha';
  };
  const base = { actor: 'user' as const };
  switch (operation.kind) {
    case 'store': {
      const entry = await service.store({
        ...base,
        pool: POOLS[operation.pool] ?? 'alpha',
        content: operation.content,
        category: operation.category,
      });
      ids.push(entry.id);
      return;
    }
    case 'update': {
      const id = pick(operation.target);
      await service.update({
        ...base,
        pool: await poolOf(id),
        id,
        ...(operation.content !== null ? { content: operation.content } : {}),
        ...(operation.category !== undefined ? { category: operation.category } : {}),
        ...(operation.confirmed !== undefined ? { confirmed: operation.confirmed } : {}),
      });
      return;
    }
    case 'refresh': {
      const id = pick(operation.target);
      await service.refresh({ ...base, pool: await poolOf(id), ids: [id] });
      return;
    }
    case 'delete':
    case 'archive':
    case 'restore':
    case 'purge': {
      const id = pick(operation.target);
      await service[operation.kind]({ ...base, pool: await poolOf(id), id });
      return;
    }
    case 'confirm': {
      const id = pick(operation.target);
      await service.confirm({ ...base, pool: await poolOf(id), id, confirmed: operation.confirmed });
      return;
    }
    case 'categorize': {
      const id = pick(operation.target);
      await service.categorize({ ...base, pool: await poolOf(id), id, category: operation.category });
      return;
    }
    case 'consolidate': {
      const [a, b] = operation.targets.map(pick) as [string, string];
      const pool = await poolOf(a);
      await service.consolidate({
        ...base,
        pool,
        model: 'off',
        merges: [{ content: operation.content, type: 'MEMORY', category: null, supersedes: [...new Set([a, b])] }],
      });
      return;
    }
    case 'search':
      await service.search({ pool: POOLS[operation.pool] ?? 'alpha', query: operation.query, recordReference: true });
      return;
  }
}

function entriesOf(projection: Projection): Map<string, MemoryEntry> {
  return new Map([...projection.queries.allEntries()].map((entry) => [entry.id, entry]));
}

describe('replay(log) equals the live database', () => {
  it.each([
    { log: 'as written', autoCompact: null, numRuns: 25 },
    // Every append that holds a reference starts a compaction, running beside the writes that follow.
    { log: 'compacted whenever it holds references', autoCompact: { minReferenceBytes: 1, shareOfRest: 0 }, numRuns: 15 },
  ])('after any random sequence of operations (evolve is the oracle), the log $log', async ({ autoCompact, numRuns }) => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 3 }), { minLength: 5, maxLength: 20 }), async (groups) => {
        const dir = tempDataDir();
        let clock = Date.parse('2026-01-01T00:00:00.000Z');
        try {
          const service = await openMemoryService({
            dataDir: dir.path,
            tier1MaxChars: 400,
            logger: silentLogger(),
            clock: () => new Date(clock),
            autoCompact,
          });
          const ids: string[] = [];
          for (const group of groups) {
            clock += 3_600_000 * 7;
            // Operations of a group run concurrently; their failures (unknown ids, archived targets) are expected.
            await Promise.allSettled(group.map((operation) => run(service, ids, operation)));
          }
          await service.close();

          const log = await EventLog.open({ codec: plainEventCodec, dir: join(dir.path, 'events'), logger: silentLogger(), readOnly: true });
          const live = Projection.open(join(dir.path, 'engram.db'));
          const replayed = Projection.open(join(dir.path, 'replayed.db'));
          catchUp(replayed, log, silentLogger());
          let oracle = INITIAL_MEMORY_STATE;
          for (const event of log.eventsAfter(0)) oracle = evolve(oracle, event);

          expect(live.lastSeq).toBe(log.lastSeq);
          expect(compareEntries(entriesOf(live), oracle.entries)).toEqual([]);
          expect(compareEntries(entriesOf(replayed), entriesOf(live))).toEqual([]);
          live.close();
          replayed.close();
          expect((await verifyDataDir(dir.path, silentLogger())).problems).toEqual([]);
        } finally {
          dir.remove();
        }
      }),
      { numRuns },
    );
  });
});
