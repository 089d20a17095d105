import { describe, expect, it } from '@jest/globals';
import { because } from '@engram/testing';
import { consolidatePool, DETERMINISTIC_MODEL } from './consolidate-pool.js';
import { entry, FakeMemory, ScriptedLlm } from './fake-memory.fixture.js';

const job = { pool: 'team', seq: 0, eventId: 'ev-21' };
const settings = { model: 'gpt-4.1-nano', threshold: 3 };

function crowdedPool(): FakeMemory {
  return new FakeMemory([
    entry({ id: 'a', content: 'User prefers concise responses', type: 'USER', category: 'preference' }),
    entry({ id: 'b', content: 'The user prefers concise responses.', type: 'USER' }),
    entry({ id: 'c', content: 'Project uses Node 18' }),
    entry({ id: 'd', content: 'Project upgraded to Node 20' }),
    entry({ id: 'e', content: 'Deploys go through GitHub Actions' }),
  ]);
}

const goodPlan = JSON.stringify({
  merges: [
    { supersedes: ['a', 'b'], content: 'User prefers concise responses', type: 'USER', category: 'preference' },
    { supersedes: ['c', 'd'], content: 'Project uses Node 20 (upgraded from 18)', type: 'MEMORY', category: 'project' },
  ],
  keep: ['e'],
});

/** Every archived entry is reachable from an active merged entry: no fact vanished. */
function expectNothingLost(memory: FakeMemory, ids: readonly string[]): void {
  const active = memory.active();
  for (const id of ids) {
    const reachable = active.some((item) => item.id === id || item.supersedes.includes(id));
    because(`${id} reachable`, () => expect(reachable).toBe(true));
  }
}

describe('consolidatePool', () => {
  it('applies a valid model plan as merges that supersede, archive and keep everything reachable', async () => {
    const memory = crowdedPool();
    const llm = new ScriptedLlm([goodPlan]);
    const outcome = await consolidatePool({ memory, llm, settings }, job);
    expect(outcome).toMatchObject({ outcome: 'consolidated', planner: 'gpt-4.1-nano', before: 5, after: 3, refused: [] });
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.messages[0]?.content).toMatch(/Merge related facts, remove stale ones/);
    expect(memory.active().map((item) => item.content)).toContain('Project uses Node 20 (upgraded from 18)');
    expect(memory.log.filter((event) => event.type === 'memory.consolidated')).toHaveLength(2);
    expect(memory.log.every((event) => event.actor === 'worker:consolidate' && event.causationId === 'ev-21')).toBe(true);
    expectNothingLost(memory, ['a', 'b', 'c', 'd', 'e']);
  });

  it('retries once after malformed JSON, telling the model why', async () => {
    const memory = crowdedPool();
    const llm = new ScriptedLlm(['{"merges": [', goodPlan]);
    const outcome = await consolidatePool({ memory, llm, settings }, job);
    expect(outcome).toMatchObject({ outcome: 'consolidated', planner: 'gpt-4.1-nano' });
    expect(outcome.refused).toEqual([expect.stringMatching(/not valid JSON/)]);
    expect(llm.requests[1]?.messages.at(-1)?.content).toMatch(/refused: the answer is not valid JSON/);
  });

  it('falls back to the deterministic merge when the plan drops an id twice', async () => {
    const memory = crowdedPool();
    const dropsE = JSON.stringify({ merges: JSON.parse(goodPlan).merges, keep: [] });
    const llm = new ScriptedLlm([dropsE, dropsE]);
    const outcome = await consolidatePool({ memory, llm, settings }, job);
    expect(outcome).toMatchObject({ outcome: 'consolidated', planner: DETERMINISTIC_MODEL, before: 5, after: 4 });
    expect(outcome.refused).toHaveLength(2);
    // Only the near-duplicates merged; the Node facts differ and both stay.
    expect(
      memory
        .active()
        .map((item) => item.id)
        .sort(),
    ).toEqual(['c', 'c1', 'd', 'e']);
    expectNothingLost(memory, ['a', 'b', 'c', 'd', 'e']);
  });

  it('falls back when the upstream fails', async () => {
    const memory = crowdedPool();
    const llm = new ScriptedLlm([new Error('502'), new Error('502')]);
    expect(await consolidatePool({ memory, llm, settings }, job)).toMatchObject({ planner: DETERMINISTIC_MODEL });
  });

  it('uses no model when the model is off or there is no upstream', async () => {
    const llm = new ScriptedLlm([goodPlan]);
    await consolidatePool({ memory: crowdedPool(), llm, settings: { ...settings, model: 'off' } }, job);
    expect(llm.requests).toEqual([]);
    const outcome = await consolidatePool({ memory: crowdedPool(), llm: null, settings }, job);
    expect(outcome.planner).toBe(DETERMINISTIC_MODEL);
  });

  it('does nothing at or below the threshold', async () => {
    const memory = crowdedPool();
    const outcome = await consolidatePool({ memory, llm: null, settings: { ...settings, threshold: 5 } }, job);
    expect(outcome.outcome).toBe('below-threshold');
    expect(memory.writes()).toEqual([]);
  });

  it('is idempotent: a redelivered job finds its merges in the log and stops', async () => {
    const memory = crowdedPool();
    await consolidatePool({ memory, llm: new ScriptedLlm([goodPlan]), settings }, job);
    const llm = new ScriptedLlm([goodPlan]);
    const again = await consolidatePool({ memory, llm, settings: { ...settings, threshold: 1 } }, job);
    expect(again.outcome).toBe('already-applied');
    expect(llm.requests).toEqual([]);
    expect(memory.active()).toHaveLength(3);
  });
});
