import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from '@jest/globals';
import { AnthropicMessagesAdapter, type AnthropicBlock, type AnthropicRequest } from '@engram/gateway-engine';
import { memoryServicePerTest } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { askAnthropic } from '../../../libs/gateway/engine/src/testing/anthropic-ask.js';
import { scriptedTurn, type ScriptedReply } from '../../support/engine-turn.js';
import { memoryInProcess } from '../../support/memory-in-process.js';

/** The engine's turn loop with the Anthropic Messages adapter, its memory tools answered by the real memory service. */

const adapter = new AnthropicMessagesAdapter();

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature: string };

/** An upstream stream in Anthropic's exact grammar, one delta per text piece. */
function upstreamStream(blocks: Block[], stopReason: string, usage = { input_tokens: 10, output_tokens: 5 }): string {
  const out: string[] = [];
  const send = (type: string, data: object) => out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send('message_start', {
    message: {
      id: 'msg_up',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
    },
  });
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      if (index === 0) send('ping', {});
      for (const piece of block.text.match(/.{1,5}/gs) ?? []) send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
    } else if (block.type === 'tool_use') {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      const json = JSON.stringify(block.input);
      for (const piece of ['', json.slice(0, 7), json.slice(7)])
        send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
    } else {
      send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } });
      send('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  send('message_stop', {});
  return out.join('');
}

function upstreamJson(blocks: Block[], stopReason: string, usage = { input_tokens: 10, output_tokens: 5 }): string {
  return JSON.stringify({
    id: 'msg_up',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content: blocks,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  });
}

const under = memoryServicePerTest();
const memory = memoryInProcess(() => under.service);

/** runTurn with this adapter against scripted upstream replies and the real memory service. */
function run(request: AnthropicRequest, replies: ScriptedReply[]) {
  return scriptedTurn(adapter, request, replies, memory);
}

function events(sse: string): { event: string; data: Record<string, unknown> }[] {
  return sse
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? '';
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? '{}';
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

/** Assembles the client's stream with the official SDK's accumulator, which rejects wrong indexes and order. */
async function assemble(sse: string): Promise<Message> {
  const lines = events(sse)
    .filter((e) => e.event !== 'ping')
    .map((e) => `${JSON.stringify(e.data)}\n`)
    .join('');
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(lines));
      controller.close();
    },
  });
  return MessageStream.fromReadableStream(body).finalMessage();
}

const ask = askAnthropic;

describe('runTurn with the Anthropic adapter, streaming', () => {
  it('runs a memory search out of sight and streams one message with gap-free indexes and summed usage', async () => {
    const { sink, sent } = await run(ask('which shell do I use?', { stream: true }), [
      {
        body: upstreamStream(
          [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_1', name: 'memory_search', input: { query: 'shell' } },
          ],
          'tool_use',
        ),
      },
      { body: upstreamStream([{ type: 'text', text: 'You use fish.' }], 'end_turn', { input_tokens: 30, output_tokens: 7 }) },
    ]);

    expect(sink.body).not.toContain('memory_search');
    const message = await assemble(sink.body);
    expect(message.content).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'text', text: 'You use fish.' },
    ]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 40, output_tokens: 12 });
    const types = events(sink.body).map((e) => e.event);
    expect(types.filter((type) => type === 'message_start')).toHaveLength(1);
    expect(types.at(-1)).toBe('message_stop');

    const continuation = sent[1]?.messages.slice(-2);
    expect(continuation?.[0]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_1', name: 'memory_search', input: { query: 'shell' } },
      ],
    });
    expect(continuation?.[1]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: expect.stringContaining('[id:fish-shell] uses fish shell') }],
    });
  });

  it('in a mixed turn runs the memory call and gives the client its own tool_use only, renumbered', async () => {
    const { sink, stored } = await run(
      ask('remember I like tabs, then list files', { stream: true, tools: [{ name: 'Bash', input_schema: { type: 'object' } }] }),
      [
        {
          body: upstreamStream(
            [
              { type: 'tool_use', id: 'toolu_m', name: 'store_memory', input: { content: 'Prefers tabs', category: 'preference' } },
              { type: 'tool_use', id: 'toolu_c', name: 'Bash', input: { command: 'ls' } },
            ],
            'tool_use',
          ),
        },
      ],
    );
    const message = await assemble(sink.body);
    expect(message.content).toEqual([{ type: 'tool_use', id: 'toolu_c', name: 'Bash', input: { command: 'ls' } }]);
    expect(message.stop_reason).toBe('tool_use');
    expect(stored).toEqual(['Prefers tabs']);
  });

  it('strips markers, drops a text block they leave empty, and hands the suggestion to extraction', async () => {
    const { sink, jobs } = await run(ask('I moved to Bern', { stream: true }), [
      {
        body: upstreamStream(
          [
            { type: 'text', text: '\n<MEMORY_SUGGEST>Lives in Bern</MEMORY_SUGGEST>' },
            { type: 'tool_use', id: 'toolu_w', name: 'Weather', input: { city: 'Bern' } },
            { type: 'text', text: 'Noted <MEMORY_SUGGEST>likes Bern</MEMORY_SUGGEST>!' },
          ],
          'tool_use',
        ),
      },
    ]);
    const message = await assemble(sink.body);
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'toolu_w', name: 'Weather', input: { city: 'Bern' } },
      { type: 'text', text: 'Noted !' },
    ]);
    expect(sink.body).not.toContain('MEMORY_SUGGEST');
    expect(jobs).toEqual([expect.objectContaining({ suggestions: ['Lives in Bern', 'likes Bern'] })]);
  });

  it('keeps text that only looked like the start of a marker, at the end of a block too', async () => {
    const { sink } = await run(ask('compare', { stream: true }), [
      { body: upstreamStream([{ type: 'text', text: 'a <MEM b, so 1 <' }], 'end_turn') },
    ]);
    const message = await assemble(sink.body);
    expect(message.content).toEqual([{ type: 'text', text: 'a <MEM b, so 1 <' }]);
  });

  it('sends thinking blocks back whole, signature included, in the memory round', async () => {
    const { sent } = await run(ask('what do I prefer?', { stream: true }), [
      {
        body: upstreamStream(
          [
            { type: 'thinking', thinking: 'Check memory.', signature: 'sig==' },
            { type: 'tool_use', id: 'toolu_1', name: 'memory_list', input: {} },
          ],
          'tool_use',
        ),
      },
      { body: upstreamStream([{ type: 'text', text: 'Tabs.' }], 'end_turn') },
    ]);
    expect(sent[1]?.messages.at(-2)?.content).toEqual([
      { type: 'thinking', thinking: 'Check memory.', signature: 'sig==' },
      { type: 'tool_use', id: 'toolu_1', name: 'memory_list', input: {} },
    ]);
  });

  it('stops the loop at the round limit and still closes one well-formed message', async () => {
    const search = (id: string) => ({ body: upstreamStream([{ type: 'tool_use', id, name: 'memory_search', input: { query: id } }], 'tool_use') });
    const { sink, sent } = await run(ask('loop', { stream: true }), [
      search('toolu_1'),
      search('toolu_2'),
      search('toolu_3'),
      search('toolu_4'),
      search('toolu_5'),
    ]);
    expect(sent).toHaveLength(5);
    const lastResults = sent[4]?.messages.at(-1)?.content as AnthropicBlock[];
    expect(lastResults[0]?.content).toBe('No more memory searches this turn. Use what you have.');
    const message = await assemble(sink.body);
    expect(message.content).toEqual([]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBe(25);
  });

  it('runs no memory call of a round the upstream failed in the middle', async () => {
    const failing = upstreamStream([{ type: 'tool_use', id: 'toolu_1', name: 'store_memory', input: { content: 'half-baked' } }], 'tool_use').replace(
      /event: message_delta[\s\S]*$/,
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    );
    const { sink, sent, stored } = await run(ask('hi', { stream: true }), [{ body: failing }]);
    expect(stored).toEqual([]);
    expect(sent).toHaveLength(1);
    expect(events(sink.body).at(-1)).toMatchObject({ event: 'error' });
  });

  it('ends a stream whose later round fails with an Anthropic error event', async () => {
    const { sink } = await run(ask('hi', { stream: true }), [
      { body: upstreamStream([{ type: 'tool_use', id: 'toolu_1', name: 'memory_list', input: {} }], 'tool_use') },
      { status: 529, body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) },
    ]);
    const last = events(sink.body).at(-1);
    expect(last).toEqual({ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    await expect(assemble(sink.body)).rejects.toThrow();
  });
});

describe('runTurn with the Anthropic adapter, not streaming', () => {
  it('answers one message without memory blocks, stop_reason mapped back, usage summed', async () => {
    const { sink, jobs } = await run(ask('which shell?'), [
      { body: upstreamJson([{ type: 'tool_use', id: 'toolu_1', name: 'memory_search', input: { query: 'shell' } }], 'tool_use') },
      {
        body: upstreamJson([{ type: 'text', text: 'fish <MEMORY_SUGGEST>uses fish</MEMORY_SUGGEST>' }], 'end_turn', {
          input_tokens: 20,
          output_tokens: 3,
        }),
      },
    ]);
    expect(sink.status).toBe(200);
    const body = JSON.parse(sink.body) as Message;
    expect(body.content).toEqual([{ type: 'text', text: 'fish ' }]);
    expect(body.stop_reason).toBe('end_turn');
    expect(body.usage).toMatchObject({ input_tokens: 30, output_tokens: 8 });
    expect(jobs).toEqual([expect.objectContaining({ suggestions: ['uses fish'], exchange: { user: 'which shell?', assistant: 'fish ' } })]);
  });

  it('relays an upstream error body as it is, and answers an unreachable upstream in Anthropic shape', async () => {
    const rejected = JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: required' } });
    const relayed = await run(ask('hi'), [{ status: 400, body: rejected }]);
    expect(relayed.sink.status).toBe(400);
    expect(relayed.sink.body).toBe(rejected);

    const unreachable = await run(ask('hi'), []);
    expect(unreachable.sink.status).toBe(502);
    expect(JSON.parse(unreachable.sink.body)).toEqual({
      type: 'error',
      error: { type: 'api_error', message: expect.stringContaining('ECONNREFUSED') },
    });
  });
});
