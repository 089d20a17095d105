import { describe, expect, it } from '@jest/globals';
import { AnthropicMessagesAdapter, OpenAiChatAdapter, OpenAiResponsesAdapter } from '@engram/gateway-engine';
import { memoryServicePerTest } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { scriptedTurn } from '../../support/engine-turn.js';
import { memoryInProcess } from '../../support/memory-in-process.js';

/** Bad input inside a memory turn (the engine's loop, the real memory service behind its tools); the rest is libs/gateway/engine/src/bad-input.spec.ts. */

const under = memoryServicePerTest();
const memory = memoryInProcess(() => under.service);
const user = [{ role: 'user', content: 'hi' }];

describe('a failure that is Engram’s own', () => {
  it('is a 500 server_error, never reported as the upstream’s, in a memory turn', async () => {
    // Too deep for JSON.stringify: the gateway refuses such bodies first, but a bug must still not look like a 502.
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const { sink, sent } = await scriptedTurn(new OpenAiChatAdapter(), { model: 'm', messages: user, metadata: deep }, [{ body: '{}' }], memory);
    expect(sent).toEqual([]);
    expect(sink.status).toBe(500);
    expect(JSON.parse(sink.body)).toEqual({ error: { message: 'internal error', type: 'server_error', code: 'internal_error' } });
  });
});

describe('a content part that is not an object', () => {
  const MARKED = 'Sure. <MEMORY_SUGGEST>User likes green tea</MEMORY_SUGGEST>';
  const parts = (text: string, type: string) => [null, 7, 'loose', [], { type, text }];

  it.each([
    [
      'Chat Completions',
      new OpenAiChatAdapter(),
      { model: 'm', messages: [{ role: 'user', content: parts('I like green tea', 'text') }] },
      { choices: [{ index: 0, message: { role: 'assistant', content: MARKED }, finish_reason: 'stop' }] },
    ],
    [
      'Responses',
      new OpenAiResponsesAdapter(),
      { model: 'm', input: [{ type: 'message', role: 'user', content: parts('I like green tea', 'input_text') }] },
      { id: 'resp_1', object: 'response', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: MARKED }] }] },
    ],
    [
      'Messages',
      new AnthropicMessagesAdapter(),
      { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: parts('I like green tea', 'text') }] },
      { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: MARKED }], stop_reason: 'end_turn' },
    ],
  ] as const)(
    'is skipped on %s: the text beside it still reaches extraction, and the request goes upstream as sent',
    async (_surface, adapter, request, reply) => {
      const { sink, sent, jobs } = await scriptedTurn(
        adapter as Parameters<typeof scriptedTurn>[0],
        request,
        [{ body: JSON.stringify(reply) }],
        memory,
      );
      expect(sink.status).toBe(200);
      expect(jobs).toEqual([
        expect.objectContaining({ suggestions: ['User likes green tea'], exchange: expect.objectContaining({ user: 'I like green tea' }) }),
      ]);
      expect(JSON.stringify(sent[0])).toContain('[null,7,"loose",[],');
    },
  );
});
