import { describe, expect, it } from '@jest/globals';
import { MEMORY_TOOLS } from '../memory-tools.js';
import { OpenAiChatAdapter } from './chat-adapter.js';

describe('OpenAiChatAdapter.withMemory', () => {
  const adapter = new OpenAiChatAdapter();
  const block = '<engram-memory>\nfacts\n</engram-memory>';

  it("appends Tier 1 to the client's system prompt and the memory tools after the client's tools", () => {
    const request = adapter.parseRequest({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      tools: [{ type: 'function', function: { name: 'mine' } }],
      extra: 1,
    });
    const injected = adapter.withMemory(request, { tier1Block: block, tools: MEMORY_TOOLS });
    expect(injected.messages[0]).toEqual({ role: 'system', content: `Be brief.\n\n${block}` });
    expect(injected.tools?.map((tool) => (tool as { function: { name: string } }).function.name)).toEqual([
      'mine',
      ...MEMORY_TOOLS.map((tool) => tool.name),
    ]);
    expect(injected['extra']).toBe(1);
    expect(adapter.clientToolNames(injected)).toEqual(new Set(['mine']));
    expect(JSON.stringify(adapter.withMemory(request, { tier1Block: block, tools: MEMORY_TOOLS }))).toBe(JSON.stringify(injected));
    // The spliced serialisation is exactly JSON.stringify's, with or without client tools.
    expect(adapter.serializeRequest(injected)).toBe(JSON.stringify(injected));
    const toolless = adapter.withMemory(adapter.parseRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], z: [1] }), {
      tier1Block: '',
      tools: MEMORY_TOOLS,
    });
    expect(adapter.serializeRequest(toolless)).toBe(JSON.stringify(toolless));
    expect(request.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
  });

  it('adds a system message when the client sent none, and nothing when Tier 1 is empty', () => {
    const request = adapter.parseRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(adapter.withMemory(request, { tier1Block: block, tools: [] }).messages[0]).toEqual({ role: 'system', content: block });
    expect(adapter.withMemory(request, { tier1Block: '', tools: [] }).messages).toEqual(request.messages);
  });

  it('rejects bodies it cannot work with', () => {
    expect(() => adapter.parseRequest([])).toThrow(/JSON object/);
    expect(() => adapter.parseRequest({ messages: 'hi' })).toThrow(/messages/);
  });
});
