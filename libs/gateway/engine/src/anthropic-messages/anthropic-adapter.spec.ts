import { describe, expect, it } from '@jest/globals';
import { MEMORY_TOOLS } from '../memory-tools.js';
import { AnthropicMessagesAdapter } from './anthropic-adapter.js';
import { askAnthropic } from '../testing/anthropic-ask.js';

// The loop with this adapter runs against the real memory service: tests/medium/gateway-engine/anthropic-messages-turn.spec.ts.

const adapter = new AnthropicMessagesAdapter();
const TIER1 = '<engram-memory>\n- prefers fish shell\n</engram-memory>';

const ask = askAnthropic;

describe('AnthropicMessagesAdapter.withMemory', () => {
  it('appends Tier 1 to system in every shape, keeping cache_control blocks as they were', () => {
    const cached = { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } };
    const memory = { tier1Block: TIER1, tools: MEMORY_TOOLS };
    expect(adapter.withMemory(ask('hi'), memory).system).toBe(TIER1);
    expect(adapter.withMemory(ask('hi', { system: 'Be brief.' }), memory).system).toBe(`Be brief.\n\n${TIER1}`);
    expect(adapter.withMemory(ask('hi', { system: [cached] }), memory).system).toEqual([cached, { type: 'text', text: TIER1 }]);
    expect(adapter.withMemory(ask('hi', { system: 'Be brief.' }), { tier1Block: '', tools: MEMORY_TOOLS }).system).toBe('Be brief.');
  });

  it('offers the memory tools after the client tools as Anthropic tools, byte-identically every time', () => {
    const clientTool = { name: 'Bash', description: 'run', input_schema: { type: 'object' } };
    const memory = { tier1Block: TIER1, tools: MEMORY_TOOLS };
    const first = adapter.withMemory(ask('hi', { tools: [clientTool] }), memory);
    const names = (first.tools as { name: string }[]).map((tool) => tool.name);
    expect(names).toEqual(['Bash', ...MEMORY_TOOLS.map((tool) => tool.name)]);
    expect(first.tools?.[1]).toEqual({ name: 'store_memory', description: MEMORY_TOOLS[0]?.description, input_schema: MEMORY_TOOLS[0]?.parameters });
    expect(adapter.serializeRequest(adapter.withMemory(ask('hi', { tools: [clientTool] }), memory))).toBe(adapter.serializeRequest(first));
  });
});
