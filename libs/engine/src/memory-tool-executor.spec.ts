import { describe, expect, it } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import { MemoryToolExecutor } from './memory-tool-executor.js';
import type { MemoryPort } from './ports.js';

function recordingMemory() {
  const stores: Record<string, unknown>[] = [];
  const memory = {
    call: (pattern: string, request: Record<string, unknown>) => {
      if (pattern === MemoryPattern.Store) stores.push(request);
      return Promise.resolve({ id: 'm1', content: String(request['content']), category: null });
    },
  } as unknown as MemoryPort;
  return { memory, stores };
}

describe('MemoryToolExecutor store_memory', () => {
  it('gives the store an idempotency key from the tool call id and content, so the same call run twice stores once', async () => {
    const { memory, stores } = recordingMemory();
    const tools = new MemoryToolExecutor(memory);
    const context = { pool: 'p', requestId: 'r1' };
    const call = (id: string, content: string) => tools.run({ id, name: 'store_memory', arguments: JSON.stringify({ content }) }, context);
    await call('call_0', 'uses zsh');
    await call('call_0', 'uses zsh');
    await call('call_1', 'uses zsh');
    await call('call_0', 'uses fish');
    const keys = stores.map((store) => store['idempotencyKey']);
    expect(keys[0]).toEqual(expect.stringMatching(/^[\x21-\x7e]{1,255}$/));
    expect(keys[1]).toBe(keys[0]);
    expect(new Set([keys[0], keys[2], keys[3]]).size).toBe(3);
  });
});
