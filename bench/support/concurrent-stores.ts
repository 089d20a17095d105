import type { MemoryService } from '@engram/memory-store';
import { sentence } from '../fixtures.js';

/**
 * The write benches' load: `total` stores of distinct sentences over 8 pools (bench-0 … bench-7), with
 * `concurrency` in flight, each sent to the service `serviceOf(index)` names. Returns the seconds until
 * the last was acknowledged.
 */
export async function storeConcurrently(concurrency: number, total: number, serviceOf: (index: number) => MemoryService): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const index = next++;
        await serviceOf(index).store({ pool: `bench-${index % 8}`, actor: 'user', content: sentence(index), category: 'project' });
      }
    }),
  );
  return (performance.now() - started) / 1000;
}
