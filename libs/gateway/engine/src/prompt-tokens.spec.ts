import { loadConfig } from '@engram/config';
import { describe, expect, it } from '@jest/globals';
import { AnthropicMessagesAdapter } from './anthropic-messages/anthropic-adapter.js';
import { MEMORY_TOOLS } from './memory-tools.js';
import { OpenAiChatAdapter } from './openai-chat/chat-adapter.js';
import { OpenAiResponsesAdapter } from './openai-responses/responses-adapter.js';
import { MEMORY_PROMPT_TOKEN_BUDGET, memoryPromptTokens } from './prompt-tokens.js';
import { fullTier1Block } from './testing/full-tier1.js';
import { MEMORY_TOOL_NAMES } from './turn.js';
import type { WireAdapter } from './wire-adapter.js';

describe("memory's share of a request", () => {
  const maxChars = loadConfig({}).tier1MaxChars;
  const fullTier1 = fullTier1Block(maxChars);

  it('fills the default Tier 1 budget in this fixture (so the count below is of a full block)', () => {
    expect(maxChars - fullTier1.length).toBeLessThan(60);
  });

  it(`costs at most ${MEMORY_PROMPT_TOKEN_BUDGET} prompt tokens: six tool definitions plus a full Tier 1 block`, async () => {
    const tokens = await memoryPromptTokens(fullTier1, MEMORY_TOOLS);
    expect(tokens).toBeLessThanOrEqual(MEMORY_PROMPT_TOKEN_BUDGET);
    // The count really includes both parts.
    expect(tokens).toBeGreaterThan((await memoryPromptTokens('', MEMORY_TOOLS)) + 80);
  });

  it('offers the six tools with the same names on every surface, byte-identical across requests', () => {
    const surfaces: [WireAdapter<unknown>, unknown][] = [
      [new OpenAiChatAdapter() as WireAdapter<unknown>, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }],
      [new AnthropicMessagesAdapter() as WireAdapter<unknown>, { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }],
      [new OpenAiResponsesAdapter() as WireAdapter<unknown>, { model: 'm', input: 'hi' }],
    ];
    for (const [adapter, body] of surfaces) {
      const render = (): string =>
        adapter.serializeRequest(adapter.withMemory(adapter.parseRequest(structuredClone(body)), { tier1Block: fullTier1, tools: MEMORY_TOOLS }));
      const first = render();
      for (const name of MEMORY_TOOL_NAMES) expect(first).toContain(`"name":"${name}"`);
      expect(render()).toBe(first);
    }
  });
});
