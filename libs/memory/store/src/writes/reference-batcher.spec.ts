import { pino } from 'pino';
import { describe, expect, it } from '@jest/globals';
import { ReferenceBatcher, type ReferenceGroup } from './reference-batcher.js';

describe('ReferenceBatcher', () => {
  it('collects references of many searches into one write per pool, actor and cause', async () => {
    const writes: (readonly ReferenceGroup[])[] = [];
    const batcher = new ReferenceBatcher(async (groups) => void writes.push(groups), pino({ level: 'silent' }), 1_000);
    batcher.add('p', ['a', 'b'], 'llm', 'req-1');
    batcher.add('p', ['b', 'c'], 'llm', 'req-1');
    batcher.add('q', ['x'], 'llm', null);
    batcher.add('p', [], 'llm', 'req-2');
    expect(writes).toEqual([]);
    await batcher.flush();
    expect(writes).toEqual([
      [
        { pool: 'p', actor: 'llm', causationId: 'req-1', ids: ['a', 'b', 'c'] },
        { pool: 'q', actor: 'llm', causationId: null, ids: ['x'] },
      ],
    ]);
    await batcher.flush();
    expect(writes).toHaveLength(1);
  });

  it('writes on its own after the delay, and survives a failing write', async () => {
    let calls = 0;
    const batcher = new ReferenceBatcher(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('disk full');
      },
      pino({ level: 'silent' }),
      5,
    );
    batcher.add('p', ['a'], 'llm', null);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toBe(1);
    batcher.add('p', ['b'], 'llm', null);
    await batcher.flush();
    expect(calls).toBe(2);
  });
});
