import { describe, expect, it } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import { MemoryToolExecutor } from '@engram/gateway-engine';
import { memoryServicePerTest } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess, observed } from '../../support/memory-in-process.js';

/** The model's memory calls, run by the gateway's executor against the real memory service. */

const under = memoryServicePerTest();
const live = memoryInProcess(() => under.service);
const context = { pool: 'p', requestId: 'r1' };
const seed = (content: string, category: 'preference' | 'project' | 'environment' = 'project') =>
  live.call(MemoryPattern.Store, { pool: 'p', actor: 'user', content, category });
const contents = async () => (await live.call(MemoryPattern.List, { pool: 'p' })).map((entry) => entry.content).sort();

function newExecutor() {
  const memory = observed(live);
  const tools = new MemoryToolExecutor(
    memory,
    () => undefined,
    () => under.now,
  );
  const run = async (name: string, args: object, id = 'c1', tier1Ids?: string[]) =>
    tools.run({ id, name, arguments: JSON.stringify(args) }, { ...context, ...(tier1Ids ? { tier1Ids } : {}) });
  return { run, memory };
}

describe('MemoryToolExecutor store_memory', () => {
  it('gives the store an idempotency key from the tool call id and content, so the same call run twice stores once', async () => {
    const { run, memory } = newExecutor();
    const first = await run('store_memory', { content: 'uses zsh' }, 'call_0');
    expect(await run('store_memory', { content: 'uses zsh' }, 'call_0')).toEqual(first);
    await run('store_memory', { content: 'uses zsh' }, 'call_1');
    await run('store_memory', { content: 'uses fish' }, 'call_0');
    const keys = memory.calls.filter((call) => call.pattern === MemoryPattern.Store).map((call) => call.request['idempotencyKey']);
    expect(keys[0]).toEqual(expect.stringMatching(/^[\x21-\x7e]{1,255}$/));
    expect(keys[1]).toBe(keys[0]);
    expect(new Set([keys[0], keys[2], keys[3]]).size).toBe(3);
    expect(await contents()).toEqual(['uses fish', 'uses zsh']);
  });

  it('tells the model a purged text was not stored because a person removed it, as a readable tool error', async () => {
    const secret = await seed('the user secret is W');
    await live.call(MemoryPattern.Purge, { pool: 'p', id: secret.id, actor: 'user' });
    const result = await newExecutor().run('store_memory', { content: 'the user secret is W' });
    expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/^Not stored: .*do not store it again\.$/) });
    expect(await contents()).toEqual([]);
  });

  it('says a fact the pool already holds was already known, citing the existing entry, and stores no copy', async () => {
    const known = await seed('Uses zsh', 'environment');
    const result = await newExecutor().run('store_memory', { content: 'uses ZSH.' });
    expect(result).toMatchObject({ content: `Already known [id:${known.id}] Uses zsh`, isError: false });
    expect(await contents()).toEqual(['Uses zsh']);
  });
});

describe('MemoryToolExecutor memory_search', () => {
  it('names entries of the Tier 1 block after the hits instead of repeating them, asking for enough hits to still fill the limit', async () => {
    const tabs = await seed('Prefers tabs', 'preference');
    await seed('Deploys go out on Fridays');
    const { run, memory } = newExecutor();
    const answer = await run('memory_search', { query: 'tabs deploys', limit: 1 }, 's', [tabs.id, 't2']);
    expect(answer.content).toMatch(/^Found 1:\n\[id:[a-z0-9]+\] Deploys go out on Fridays \(project, today, conf 1\.0\)\n/);
    expect(answer.content).toMatch(new RegExp(`\\nAlso in your memory block:\\n\\[id:${tabs.id}\\] Prefers tabs$`));
    expect(memory.calls[0]?.request).toMatchObject({ query: 'tabs deploys', limit: 3, recordReference: true });
  });

  it('names the matching ids when every hit is already in the Tier 1 block, and says when nothing matches', async () => {
    const tabs = await seed('Prefers tabs', 'preference');
    const { run } = newExecutor();
    expect((await run('memory_search', { query: 'tabs' }, 's', [tabs.id])).content).toBe(
      `Only memories already in your memory block match "tabs":\n[id:${tabs.id}] Prefers tabs`,
    );
    expect((await run('memory_search', { query: 'kangaroo' }, 's', [tabs.id])).content).toBe('No memories match "kangaroo".');
  });
});
