import { describe, expect, it } from '@jest/globals';
import { MEMORY_TOOLS } from '../memory-tools.js';
import { OpenAiResponsesAdapter } from './responses-adapter.js';

// The loop with this adapter runs against the real memory service: tests/medium/gateway-engine/openai-responses-turn.spec.ts.

const adapter = new OpenAiResponsesAdapter();
const TIER1 = '<engram-memory>\n- prefers fish shell\n</engram-memory>';

describe('OpenAiResponsesAdapter.withMemory', () => {
  it('appends Tier 1 to instructions and memory tools, non-strict, after the client tools', () => {
    const clientTool = { type: 'function', name: 'shell', parameters: { type: 'object' } };
    const memory = { tier1Block: TIER1, tools: MEMORY_TOOLS };
    const request = adapter.withMemory({ model: 'gpt-5', input: 'hi', instructions: 'You are Codex.', tools: [clientTool] }, memory);
    expect(request.instructions).toBe(`You are Codex.\n\n${TIER1}`);
    expect(adapter.withMemory({ model: 'gpt-5', input: 'hi' }, memory).instructions).toBe(TIER1);
    expect((request.tools as { name: string }[]).map((tool) => tool.name)).toEqual(['shell', ...MEMORY_TOOLS.map((tool) => tool.name)]);
    expect(request.tools?.[1]).toMatchObject({ type: 'function', name: 'store_memory', strict: false });
    expect([...adapter.clientToolNames(request)]).toEqual(['shell']);
  });
});
