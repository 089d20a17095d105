import { describe, expect, it } from '@jest/globals';
import { sseBatches, sseEvent, sseFrame, sseVerbatim, type SseMessage } from './sse.js';

async function batchesOf(chunks: string[]): Promise<SseMessage[][]> {
  const body = (async function* () {
    for (const chunk of chunks) yield new TextEncoder().encode(chunk);
  })();
  const batches: SseMessage[][] = [];
  for await (const batch of sseBatches(body)) batches.push([...batch]);
  return batches;
}

describe('server-sent events', () => {
  it('reads an event split across network chunks once its chunk ends it, and batches by chunk', async () => {
    const batches = await batchesOf(['event: a\ndata: {"x":', '1}\n\ndata: two\n\ndata: thr', 'ee\n\n']);
    expect(batches).toEqual([[{ event: 'a', data: '{"x":1}' }, { data: 'two' }], [{ data: 'three' }]]);
  });

  it('keeps a multi-byte character split between chunks whole', async () => {
    const bytes = new TextEncoder().encode('data: héllo\n\n');
    const body = (async function* () {
      yield bytes.slice(0, 8);
      yield bytes.slice(8);
    })();
    const messages: SseMessage[] = [];
    for await (const batch of sseBatches(body)) messages.push(...batch);
    expect(messages.map((message) => message.data)).toEqual(['héllo']);
  });

  it('writes frames the way the providers do', () => {
    expect(sseFrame('[DONE]')).toBe('data: [DONE]\n\n');
    expect(sseFrame('{}', 'ping')).toBe('event: ping\ndata: {}\n\n');
    expect(sseEvent('message_stop', { type: 'message_stop' })).toBe('event: message_stop\ndata: {"type":"message_stop"}\n\n');
    expect(sseVerbatim({ event: 'x', data: 'y' })).toBe('event: x\ndata: y\n\n');
    expect(sseVerbatim({ data: 'y' })).toBe('data: y\n\n');
  });
});
