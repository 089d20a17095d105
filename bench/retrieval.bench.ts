/**
 * Retrieval quality on the LoCoMo dev set (../shared/data/README.md has the protocol): a real
 * memory process, every turn stored over the TCP RPC the gateway uses (the product's write path),
 * every question asked through the search `memory_search` calls, limit 10. Prints recall@1/5/10,
 * recall@5 per question category and the search latency. Skipped, saying so, without the data set.
 */
import { MemoryPattern } from '@engram/contracts';
import { startRedis } from '../tests/support/redis.js';
import { startMemory } from '../tests/support/stack.js';
import type { BenchRow } from './run.js';
import { percentile } from './stats.js';
import { CATEGORY_NAMES, firstHit, loadLocomo, locomoPath, recallAt, type QuestionOutcome } from './support/locomo.js';

const SUITE = 'retrieval';

export async function run(): Promise<BenchRow[]> {
  const conversations = loadLocomo();
  if (conversations === null) {
    console.log(`retrieval: skipped, no data set at ${locomoPath()} (set ENGRAM_LOCOMO to its path)`);
    return [];
  }
  const redis = await startRedis();
  const memory = await startMemory({ REDIS_URL: redis.url });
  const client = memory.client(10_000);
  const outcomes: QuestionOutcome[] = [];
  const latencies: number[] = [];
  try {
    for (const conversation of conversations) {
      const pool = `locomo-${conversation.id}`.toLowerCase();
      const diaIdOf = new Map<string, string>();
      for (const turn of conversation.turns) {
        const entry = await client.call(MemoryPattern.Store, { pool, content: turn.content, type: 'MEMORY', actor: 'user', source: 'user' });
        diaIdOf.set(entry.id, turn.diaId);
      }
      for (const question of conversation.questions) {
        const started = performance.now();
        const hits = await client.call(MemoryPattern.Search, { pool, query: question.question, limit: 10 });
        latencies.push(performance.now() - started);
        outcomes.push({
          category: question.category,
          firstHit: firstHit(
            hits.map((hit) => diaIdOf.get(hit.entry.id)),
            question.evidence,
          ),
        });
      }
    }
  } finally {
    await client.close();
    await memory.stop();
    await redis.stop();
  }
  const note = `${outcomes.length} questions of ${conversations.length} conversations, no embedder`;
  const rows: BenchRow[] = [
    { suite: SUITE, metric: 'recall@1', value: recallAt(outcomes, 1), unit: 'share', note },
    { suite: SUITE, metric: 'recall@5', value: recallAt(outcomes, 5), unit: 'share', target: '>= 0.66', note },
    { suite: SUITE, metric: 'recall@10', value: recallAt(outcomes, 10), unit: 'share', note },
  ];
  for (const [category, name] of Object.entries(CATEGORY_NAMES)) {
    const ofCategory = outcomes.filter((outcome) => outcome.category === Number(category));
    rows.push({ suite: SUITE, metric: `recall@5 ${name}`, value: recallAt(ofCategory, 5), unit: 'share', note: `${ofCategory.length} questions` });
  }
  const latencyNote = 'over TCP RPC, limit 10, pools of 509-689 entries';
  rows.push(
    { suite: SUITE, metric: 'search p50', value: percentile(latencies, 50), unit: 'ms', note: latencyNote },
    { suite: SUITE, metric: 'search p95', value: percentile(latencies, 95), unit: 'ms', note: latencyNote },
  );
  return rows;
}
