import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because } from '@engram/testing';
import { startGatewayStack, type GatewayStack } from '../support/gateway-fixture.js';
import { callTools, say } from '../support/scripted-openai-upstream.js';

/** Words a person searches for: what a purge of the entries they found must not leave behind in the logs. */
const SEARCHED = 'zanzibar';

/**
 * A purge forgets an entry's text in the store, but a log line outlives it: the words a person (or the
 * model) searched for must not reach any log, at any level, on any surface.
 */
describe('search terms never reach the logs', () => {
  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startGatewayStack({
      responder: (request) =>
        JSON.stringify(request.body).includes('"role":"tool"')
          ? say('Nothing about that.')
          : callTools({ name: 'memory_search', arguments: { query: `${SEARCHED} plans` } }),
      gatewayEnv: { LOG_LEVEL: 'trace' },
      memoryEnv: { LOG_LEVEL: 'trace' },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('on REST searches (?q=), the console listing, MCP and the model memory_search tool, in the gateway and in memory', async () => {
    const base = `${stack.gateway.url}/engram/pools/private`;
    expect((await fetch(`${base}/memories?q=${SEARCHED}`)).status).toBe(200);
    expect((await fetch(`${base}/memories?q=${SEARCHED}%20trip&limit=50&sort=created`)).status).toBe(200);
    expect((await fetch(`${stack.gateway.url}/engram/pools/Not_A_Pool/memories?q=${SEARCHED}`)).status).toBe(400);

    const mcp = new Client({ name: 'log-privacy', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${stack.gateway.url}/pools/private/mcp`)));
    await mcp.callTool({ name: 'memory_search', arguments: { query: `${SEARCHED} holiday` } });
    await mcp.close();

    const reply = await stack
      .client({ pool: 'private' })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'What did I plan?' }] });
    expect(reply.choices[0]?.message.content).toBe('Nothing about that.');
    // The model's search did run (through memory) with the words in it.
    expect(JSON.stringify(stack.upstream.requests.at(-1)?.body)).toContain(SEARCHED);

    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const [name, output] of [
      ['gateway', stack.gateway.process.output()],
      ['memory', stack.memory!.process.output()],
    ] as const) {
      because(`${name} logged a request (the log is on)`, () => expect(output).toContain('"requestId"'));
      because(`${name} logged the searched words`, () => expect(output.toLowerCase()).not.toContain(SEARCHED));
    }
    // The route is still there for an operator to read.
    expect(stack.gateway.process.output()).toContain('"path":"/engram/pools/private/memories"');
  });
});
