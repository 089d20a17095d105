import { describe, expect, it } from '@jest/globals';
import { OpenAiResponsesAdapter, type ResponsesItem, type ResponsesRequest } from '@engram/gateway-engine';
import { memoryServicePerTest } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { scriptedTurn, type ScriptedReply } from '../../support/engine-turn.js';
import { memoryInProcess } from '../../support/memory-in-process.js';

/** The engine's turn loop with the OpenAI Responses adapter, its memory tools answered by the real memory service. */

const adapter = new OpenAiResponsesAdapter();

type Item =
  | { type: 'text'; text: string }
  | { type: 'call'; callId: string; name: string; args: string }
  | { type: 'custom'; callId: string; name: string; input: string }
  | { type: 'reasoning'; id: string };

function outputItem(item: Item, index: number): ResponsesItem {
  if (item.type === 'text') {
    return {
      id: `msg_${index}`,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', annotations: [], text: item.text }],
    };
  }
  if (item.type === 'reasoning') return { id: item.id, type: 'reasoning', summary: [], encrypted_content: 'enc' };
  if (item.type === 'custom')
    return { id: `ctc_${index}`, type: 'custom_tool_call', status: 'completed', call_id: item.callId, name: item.name, input: item.input };
  return { id: `fc_${index}`, type: 'function_call', status: 'completed', call_id: item.callId, name: item.name, arguments: item.args };
}

function response(id: string, items: Item[], usage = { input_tokens: 10, output_tokens: 5, total_tokens: 15 }) {
  return { id, object: 'response', status: 'completed', output: items.map(outputItem), tools: [], usage };
}

/** An upstream stream in the Responses API's exact event grammar. */
function upstreamStream(id: string, items: Item[], usage?: { input_tokens: number; output_tokens: number; total_tokens: number }): string {
  let sequence = 0;
  const out: string[] = [];
  const send = (type: string, data: object) =>
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  const done = response(id, items, usage);
  const pending = { ...done, status: 'in_progress', output: [], usage: null };
  send('response.created', { response: pending });
  send('response.in_progress', { response: pending });
  items.forEach((item, output_index) => {
    const full = outputItem(item, output_index);
    if (item.type === 'text') {
      send('response.output_item.added', { output_index, item: { ...full, status: 'in_progress', content: [] } });
      send('response.content_part.added', {
        item_id: full['id'],
        output_index,
        content_index: 0,
        part: { type: 'output_text', annotations: [], text: '' },
      });
      for (const delta of item.text.match(/.{1,5}/gs) ?? [])
        send('response.output_text.delta', { item_id: full['id'], output_index, content_index: 0, delta, logprobs: [] });
      send('response.output_text.done', { item_id: full['id'], output_index, content_index: 0, text: item.text, logprobs: [] });
      send('response.content_part.done', {
        item_id: full['id'],
        output_index,
        content_index: 0,
        part: { type: 'output_text', annotations: [], text: item.text },
      });
    } else if (item.type === 'call') {
      send('response.output_item.added', { output_index, item: { ...full, status: 'in_progress', arguments: '' } });
      send('response.function_call_arguments.delta', { item_id: full['id'], output_index, delta: item.args });
      send('response.function_call_arguments.done', { item_id: full['id'], output_index, name: item.name, arguments: item.args });
    } else if (item.type === 'custom') {
      send('response.output_item.added', { output_index, item: { ...full, status: 'in_progress', input: '' } });
      send('response.custom_tool_call_input.delta', { item_id: full['id'], output_index, delta: item.input });
      send('response.custom_tool_call_input.done', { item_id: full['id'], output_index, input: item.input });
    } else {
      send('response.output_item.added', { output_index, item: full });
    }
    send('response.output_item.done', { output_index, item: full });
  });
  send('response.completed', { response: done });
  return out.join('');
}

const under = memoryServicePerTest();
const memory = memoryInProcess(() => under.service);

/** runTurn with this adapter against scripted upstream replies and the real memory service. */
function run(request: ResponsesRequest, replies: ScriptedReply[]) {
  return scriptedTurn(adapter, request, replies, memory);
}

function events(sse: string): Record<string, unknown>[] {
  return sse
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? '{}') as Record<string, unknown>);
}

/** The client-side invariants the openai SDK and Codex rely on. */
function checkGrammar(list: Record<string, unknown>[]): void {
  expect(list.map((event) => event['sequence_number'])).toEqual(list.map((_, index) => index));
  expect(list[0]?.['type']).toBe('response.created');
  const added: number[] = [];
  for (const event of list) {
    if (event['type'] === 'response.output_item.added') added.push(Number(event['output_index']));
    else if ('output_index' in event) expect(added).toContain(event['output_index']);
  }
  expect(added).toEqual(added.map((_, index) => index));
}

describe('runTurn with the Responses adapter, streaming', () => {
  it('hides the memory loop: gap-free output indexes, monotonic sequence numbers, completed with the last id', async () => {
    const { sink, sent } = await run({ model: 'gpt-5', input: 'which shell?', stream: true }, [
      {
        body: upstreamStream('resp_1', [
          { type: 'reasoning', id: 'rs_1' },
          { type: 'call', callId: 'call_m', name: 'memory_search', args: '{"query":"shell"}' },
        ]),
      },
      { body: upstreamStream('resp_2', [{ type: 'text', text: 'You use fish.' }], { input_tokens: 30, output_tokens: 7, total_tokens: 37 }) },
    ]);
    expect(sink.body).not.toContain('memory_search');
    const list = events(sink.body);
    checkGrammar(list);
    const completed = list.at(-1) as { type: string; response: { id: string; output: ResponsesItem[]; usage: Record<string, number> } };
    expect(completed.type).toBe('response.completed');
    expect(completed.response.id).toBe('resp_2');
    expect(completed.response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(completed.response.usage).toMatchObject({ input_tokens: 40, output_tokens: 12, total_tokens: 52 });
    expect(list.filter((event) => event['type'] === 'response.created')).toHaveLength(1);

    expect((sent[1]?.input as ResponsesItem[]).map((item) => item.type ?? item['role'])).toEqual([
      'user',
      'reasoning',
      'function_call',
      'function_call_output',
    ]);
    expect((sent[1]?.input as ResponsesItem[]).at(-1)).toMatchObject({
      call_id: 'call_m',
      output: expect.stringContaining('[id:fish-shell] uses fish shell'),
    });
  });

  it('in a mixed turn gives the client its own function call only, and strips markers', async () => {
    const { sink, stored, jobs } = await run(
      { model: 'gpt-5', input: 'note I like tabs and run ls', stream: true, tools: [{ type: 'function', name: 'shell' }] },
      [
        {
          body: upstreamStream('resp_1', [
            { type: 'text', text: 'On it.<MEMORY_SUGGEST>likes tabs</MEMORY_SUGGEST>' },
            { type: 'call', callId: 'call_m', name: 'store_memory', args: '{"content":"Prefers tabs"}' },
            { type: 'call', callId: 'call_c', name: 'shell', args: '{"cmd":"ls"}' },
          ]),
        },
      ],
    );
    const list = events(sink.body);
    checkGrammar(list);
    const completed = list.at(-1) as { response: { output: ResponsesItem[] } };
    expect(completed.response.output).toEqual([
      expect.objectContaining({ type: 'message', content: [expect.objectContaining({ text: 'On it.' })] }),
      expect.objectContaining({ type: 'function_call', call_id: 'call_c', name: 'shell' }),
    ]);
    const textDone = list.find((event) => event['type'] === 'response.output_text.done');
    expect(textDone?.['text']).toBe('On it.');
    expect(sink.body).not.toContain('MEMORY_SUGGEST');
    expect(stored).toEqual(['Prefers tabs']);
    expect(jobs).toEqual([expect.objectContaining({ suggestions: ['likes tabs'] })]);
  });

  it('ends the loop when a memory call comes with a custom tool call (Codex apply_patch), which the client gets', async () => {
    const { sink, sent, stored } = await run({ model: 'gpt-5', input: 'patch it', stream: true, tools: [{ type: 'custom', name: 'apply_patch' }] }, [
      {
        body: upstreamStream('resp_1', [
          { type: 'call', callId: 'call_m', name: 'store_memory', args: '{"content":"Uses apply_patch"}' },
          { type: 'custom', callId: 'call_p', name: 'apply_patch', input: '*** Begin Patch' },
        ]),
      },
    ]);
    expect(sent).toHaveLength(1);
    expect(stored).toEqual(['Uses apply_patch']);
    const list = events(sink.body);
    checkGrammar(list);
    expect(list.find((event) => event['type'] === 'response.custom_tool_call_input.delta')).toMatchObject({ output_index: 0 });
    expect((list.at(-1) as { response: { output: ResponsesItem[] } }).response.output).toEqual([
      expect.objectContaining({ type: 'custom_tool_call', call_id: 'call_p', input: '*** Begin Patch' }),
    ]);
  });

  it('owes the memory outputs of a mixed turn to the client request that continues it', async () => {
    await run({ model: 'gpt-5', input: 'note tabs, run ls', stream: true, tools: [{ type: 'function', name: 'shell' }] }, [
      {
        body: upstreamStream('resp_mixed', [
          { type: 'call', callId: 'call_m', name: 'store_memory', args: '{"content":"Prefers tabs"}' },
          { type: 'call', callId: 'call_c', name: 'shell', args: '{"cmd":"ls"}' },
        ]),
      },
    ]);
    const { sent } = await run(
      { model: 'gpt-5', previous_response_id: 'resp_mixed', input: [{ type: 'function_call_output', call_id: 'call_c', output: 'a.txt' }] },
      [{ body: JSON.stringify(response('resp_next', [{ type: 'text', text: 'done' }])) }],
    );
    expect((sent[0]?.input as ResponsesItem[]).map((item) => item['call_id'])).toEqual(['call_m', 'call_c']);
  });

  it('keeps text that only looked like the start of a marker, at the end of a message too', async () => {
    const { sink } = await run({ model: 'gpt-5', input: 'compare', stream: true }, [
      { body: upstreamStream('resp_1', [{ type: 'text', text: 'a <MEM b, so 1 <' }]) },
    ]);
    const list = events(sink.body);
    const deltas = list.filter((event) => event['type'] === 'response.output_text.delta').map((event) => String(event['delta']));
    expect(deltas.join('')).toBe('a <MEM b, so 1 <');
    expect(list.find((event) => event['type'] === 'response.output_text.done')?.['text']).toBe('a <MEM b, so 1 <');
  });

  it('sends items back without ids when store is false', async () => {
    const { sent } = await run({ model: 'gpt-5', input: 'hi', stream: true, store: false }, [
      {
        body: upstreamStream('resp_1', [
          { type: 'reasoning', id: 'rs_1' },
          { type: 'call', callId: 'call_m', name: 'memory_list', args: '{}' },
        ]),
      },
      { body: upstreamStream('resp_2', [{ type: 'text', text: 'ok' }]) },
    ]);
    const input = sent[1]?.input as ResponsesItem[];
    expect(input[1]).toEqual({ type: 'reasoning', summary: [], encrypted_content: 'enc' });
    expect(input[2]).not.toHaveProperty('id');
  });

  it('fails a stream whose later round fails with response.failed carrying the upstream error', async () => {
    const { sink } = await run({ model: 'gpt-5', input: 'hi', stream: true }, [
      { body: upstreamStream('resp_1', [{ type: 'call', callId: 'call_m', name: 'memory_list', args: '{}' }]) },
      { status: 429, body: JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }) },
    ]);
    const list = events(sink.body);
    checkGrammar(list);
    expect(list.at(-1)).toMatchObject({
      type: 'response.failed',
      response: { status: 'failed', error: { code: 'rate_limit_exceeded', message: 'slow down' } },
    });
  });
});

describe('runTurn with the Responses adapter, not streaming', () => {
  it('answers the client items only, usage summed, the last id, memory tools not echoed', async () => {
    const first = response('resp_1', [{ type: 'call', callId: 'call_m', name: 'memory_search', args: '{"query":"shell"}' }]);
    const second = response('resp_2', [{ type: 'text', text: 'fish' }]);
    const { sink, sent } = await run({ model: 'gpt-5', input: 'which shell?', previous_response_id: 'resp_0' }, [
      { body: JSON.stringify({ ...first, tools: [{ type: 'function', name: 'memory_search' }] }) },
      { body: JSON.stringify(second) },
    ]);
    const body = JSON.parse(sink.body) as { id: string; output: ResponsesItem[]; usage: Record<string, number>; tools: unknown[] };
    expect(body.id).toBe('resp_2');
    expect(body.output).toEqual([expect.objectContaining({ type: 'message' })]);
    expect(body.usage).toMatchObject({ input_tokens: 20, output_tokens: 10 });
    expect(sent[1]?.previous_response_id).toBe('resp_0');
  });

  it('shows each message text with its markers stripped, and hands them to extraction', async () => {
    const answer = response('resp_1', [
      { type: 'text', text: 'Tabs <MEMORY_SUGGEST>likes tabs</MEMORY_SUGGEST>it is.' },
      { type: 'text', text: '<MEMORY_SUGGEST>uses zsh</MEMORY_SUGGEST>' },
    ]);
    const { sink, jobs } = await run({ model: 'gpt-5', input: 'tabs or spaces?' }, [{ body: JSON.stringify(answer) }]);
    const body = JSON.parse(sink.body) as { output: { content: { text: string }[] }[] };
    expect(body.output.map((item) => item.content.map((part) => part.text).join(''))).toEqual(['Tabs it is.']);
    expect(jobs).toEqual([
      expect.objectContaining({ suggestions: ['likes tabs', 'uses zsh'], exchange: { user: 'tabs or spaces?', assistant: 'Tabs it is.' } }),
    ]);
  });

  it('answers an unreachable upstream with a 502 in OpenAI shape', async () => {
    const { sink } = await run({ model: 'gpt-5', input: 'hi' }, []);
    expect(sink.status).toBe(502);
    expect(JSON.parse(sink.body)).toMatchObject({ error: { type: 'upstream_error', code: 'upstream_unavailable' } });
  });
});
