import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because } from '@engram/testing';
import { contentText, startGatewayStack, type GatewayStack } from '../support/gateway-fixture.js';
import type { RecordedRequest } from '../support/scripted-http.js';
import { callTools, say, type ChatReply, type ChatRequestJson } from '../support/scripted-openai-upstream.js';

/** The model stores what it is told to remember, as it was said, with its own store_memory call. */
function model(request: RecordedRequest): ChatReply {
  const last = (request.body as ChatRequestJson).messages.at(-1);
  if (last?.role === 'tool') return say('Noted.');
  const user = contentText(last?.content);
  if (user.startsWith('REMEMBER '))
    return callTools({ name: 'store_memory', arguments: { content: user.slice(9), type: 'USER', category: 'preference' } });
  return say('ok');
}

// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|[\ud800-\udfff]/;

/**
 * A lone surrogate half and control characters, sent on each surface that stores: every copy of the
 * entry (the POST's answer, GET, the flat file, the log, the Tier 1 block) reads the same, with
 * U+FFFD where the character could not be kept.
 */
describe('odd characters in a memory come back the same everywhere', () => {
  let stack: GatewayStack;
  const pool = 'odd';
  const rest = (path: string, init?: RequestInit) => fetch(`${stack.gateway.url}/engram/pools/${pool}${path}`, init);
  const entries = async (): Promise<{ id: string; content: string }[]> =>
    ((await (await rest('/memories?limit=100')).json()) as { data: { id: string; content: string }[] }).data;
  const logged = (id: string): string[] =>
    readdirSync(join(stack.memory!.dataDir, 'events'))
      .flatMap((name) => readFileSync(join(stack.memory!.dataDir, 'events', name), 'utf8').split('\n'))
      .filter((line) => line.includes(`"i":"${id}"`) && line.includes('"c":'))
      .map((line) => (JSON.parse(line) as { d: { c: string } }).d.c); // the log's short line: d = data, c = content
  const userFile = (): string => readFileSync(join(stack.memory!.dataDir, 'pools', pool, 'USER.md'), 'utf8');

  beforeAll(async () => {
    stack = await startGatewayStack({ responder: model });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('over REST: the POST answer, GET, USER.md, the log and the Tier 1 block agree on one U+FFFD', async () => {
    const posted = await rest('/memories', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'lone \ud800 surrogate', type: 'USER', category: 'preference' }),
    });
    expect(posted.status).toBe(201);
    // The answer's bytes: a lone surrogate would be the escape \ud800, one U+FFFD is its UTF-8.
    const answer = await posted.text();
    expect(answer).not.toContain('\\ud800');
    const entry = JSON.parse(answer) as { id: string; content: string };
    const expected = 'lone \ufffd surrogate';
    expect(entry.content).toBe(expected);
    expect(((await (await rest(`/memories/${entry.id}`)).json()) as { content: string }).content).toBe(expected);
    expect(userFile()).toContain(`[id:${entry.id}] (preference) ${expected}\n`);
    expect(logged(entry.id)).toEqual([expected]);
    expect(((await (await rest('/tier1')).json()) as { block: string }).block).toContain(expected);
  });

  it('over MCP and through the model store_memory tool, with NUL and escape characters too', async () => {
    const mcp = new Client({ name: 'stored-text', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${stack.gateway.url}/pools/${pool}/mcp`)));
    await mcp.callTool({
      name: 'store_memory',
      arguments: { content: 'mcp\u0000 \u001b[1mbold\u001b[0m \udfff end', type: 'USER', category: 'preference' },
    });
    await mcp.close();

    const reply = await stack
      .client({ pool })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'REMEMBER model \ud83d cut\u0007 bell' }] });
    expect(reply.choices[0]?.message.content).toBe('Noted.');

    const stored = await entries();
    const byMcp = stored.find((entry) => entry.content.startsWith('mcp'));
    const byModel = stored.find((entry) => entry.content.startsWith('model'));
    expect(byMcp?.content).toBe('mcp\ufffd \ufffd[1mbold\ufffd[0m \ufffd end');
    expect(byModel?.content).toBe('model \ufffd cut\ufffd bell');
    for (const entry of [byMcp!, byModel!]) {
      expect(logged(entry.id)).toEqual([entry.content]);
      expect(userFile()).toContain(`[id:${entry.id}] (preference) ${entry.content}\n`);
    }
    const block = ((await (await rest('/tier1')).json()) as { block: string }).block;
    because('the Tier 1 block holds the entries', () => expect(block).toContain(byModel!.content));
    because('no raw control character or surrogate half reaches the Tier 1 block', () => expect(block).not.toMatch(RAW));
    because('nor the flat files', () => expect(userFile()).not.toMatch(RAW));
  });
});
