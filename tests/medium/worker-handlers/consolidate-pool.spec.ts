import { describe, expect, it } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import { consolidatePool, DETERMINISTIC_MODEL } from '@engram/worker-handlers';
import { because } from '@engram/testing';
import { memoryServicePerTest } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess } from '../../support/memory-in-process.js';
import { ScriptedLlm } from '../../support/scripted-llm.js';

const job = { pool: 'team', seq: 0, eventId: 'ev-21' };
const settings = { model: 'gpt-4.1-nano', threshold: 3 };
const IDS = ['fact-a', 'fact-b', 'fact-c', 'fact-d', 'fact-e'];

const goodPlan = JSON.stringify({
  merges: [
    { supersedes: ['fact-a', 'fact-b'], content: 'User prefers concise responses', type: 'USER', category: 'preference' },
    { supersedes: ['fact-c', 'fact-d'], content: 'Project uses Node 20 (upgraded from 18)', type: 'MEMORY', category: 'project' },
  ],
  keep: ['fact-e'],
});

describe('the worker’s consolidation job against the real memory service', () => {
  const under = memoryServicePerTest();
  const memory = memoryInProcess(() => under.service);
  const active = () => memory.call(MemoryPattern.List, { pool: 'team', archived: false, limit: 100 });
  const events = () => memory.call(MemoryPattern.EventsAfter, { after: 0 });

  async function crowdedPool(): Promise<void> {
    const facts = [
      { id: 'fact-a', content: 'User prefers concise responses', type: 'USER', category: 'preference' },
      { id: 'fact-b', content: 'The user prefers concise responses.', type: 'USER' },
      { id: 'fact-c', content: 'Project uses Node 18' },
      { id: 'fact-d', content: 'Project upgraded to Node 20' },
      { id: 'fact-e', content: 'Deploys go through GitHub Actions' },
    ] as const;
    for (const fact of facts) await memory.call(MemoryPattern.Store, { pool: 'team', actor: 'llm', ...fact });
  }

  /** Every archived entry is reachable from an active merged entry: no fact vanished. */
  async function expectNothingLost(): Promise<void> {
    const now = await active();
    for (const id of IDS) {
      const reachable = now.some((item) => item.id === id || item.supersedes.includes(id));
      because(`${id} reachable`, () => expect(reachable).toBe(true));
    }
  }

  it('applies a valid model plan as merges that supersede, archive and keep everything reachable', async () => {
    await crowdedPool();
    const llm = new ScriptedLlm([goodPlan]);
    const outcome = await consolidatePool({ memory, llm, settings }, job);
    expect(outcome).toMatchObject({ outcome: 'consolidated', planner: 'gpt-4.1-nano', before: 5, after: 3, refused: [] });
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.messages[0]?.content).toMatch(/Merge related facts, remove stale ones/);
    expect((await active()).map((item) => item.content)).toContain('Project uses Node 20 (upgraded from 18)');
    const merges = (await events()).filter((event) => event.type === 'memory.consolidated');
    expect(merges).toHaveLength(2);
    expect(merges.every((event) => event.actor === 'worker:consolidate' && event.causationId === 'ev-21')).toBe(true);
    await expectNothingLost();
  });

  it('retries once after malformed JSON, telling the model why', async () => {
    await crowdedPool();
    const llm = new ScriptedLlm(['{"merges": [', goodPlan]);
    const outcome = await consolidatePool({ memory, llm, settings }, job);
    expect(outcome).toMatchObject({ outcome: 'consolidated', planner: 'gpt-4.1-nano' });
    expect(outcome.refused).toEqual([expect.stringMatching(/not valid JSON/)]);
    expect(llm.requests[1]?.messages.at(-1)?.content).toMatch(/refused: the answer is not valid JSON/);
  });

  it('falls back to the deterministic merge when the plan drops an id twice', async () => {
    await crowdedPool();
    const dropsE = JSON.stringify({ merges: JSON.parse(goodPlan).merges, keep: [] });
    const llm = new ScriptedLlm([dropsE, dropsE]);
    const outcome = await consolidatePool({ memory, llm, settings }, job);
    expect(outcome).toMatchObject({ outcome: 'consolidated', planner: DETERMINISTIC_MODEL, before: 5, after: 4 });
    expect(outcome.refused).toHaveLength(2);
    // Only the near-duplicates merged; the Node facts differ and both stay.
    const left = await active();
    expect(
      left
        .filter((item) => IDS.includes(item.id))
        .map((item) => item.id)
        .sort(),
    ).toEqual(['fact-c', 'fact-d', 'fact-e']);
    expect(left.find((item) => !IDS.includes(item.id))?.supersedes).toEqual(['fact-a', 'fact-b']);
    await expectNothingLost();
  });

  it('falls back when the upstream fails', async () => {
    await crowdedPool();
    const llm = new ScriptedLlm([new Error('502'), new Error('502')]);
    expect(await consolidatePool({ memory, llm, settings }, job)).toMatchObject({ planner: DETERMINISTIC_MODEL });
  });

  it('uses no model when the model is off or there is no upstream', async () => {
    await crowdedPool();
    const llm = new ScriptedLlm([goodPlan]);
    expect(await consolidatePool({ memory, llm, settings: { ...settings, model: 'off' } }, job)).toMatchObject({ planner: DETERMINISTIC_MODEL });
    expect(llm.requests).toEqual([]);
  });

  it('uses no model when there is no upstream', async () => {
    await crowdedPool();
    expect((await consolidatePool({ memory, llm: null, settings }, job)).planner).toBe(DETERMINISTIC_MODEL);
  });

  it('does nothing at or below the threshold', async () => {
    await crowdedPool();
    const outcome = await consolidatePool({ memory, llm: null, settings: { ...settings, threshold: 5 } }, job);
    expect(outcome.outcome).toBe('below-threshold');
    expect((await events()).every((event) => event.type === 'memory.stored')).toBe(true);
  });

  it('is idempotent: a redelivered job finds its merges in the log and stops', async () => {
    await crowdedPool();
    await consolidatePool({ memory, llm: new ScriptedLlm([goodPlan]), settings }, job);
    const llm = new ScriptedLlm([goodPlan]);
    const again = await consolidatePool({ memory, llm, settings: { ...settings, threshold: 1 } }, job);
    expect(again.outcome).toBe('already-applied');
    expect(llm.requests).toEqual([]);
    expect(await active()).toHaveLength(3);
  });
});
