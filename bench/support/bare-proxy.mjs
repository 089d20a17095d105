/**
 * The floor the gateway bench compares against: a bare node:http server that does only the work
 * every memory-injecting proxy must do per request — read and parse the body, add the Tier 1
 * block and the six memory tools (with the gateway's own adapter code), forward it over an undici
 * Pool, read the answer, check it for memory calls and markers, and send it back. No framework,
 * no auth, no pools, no metrics, no logs, no error handling.
 *
 *   UPSTREAM=http://127.0.0.1:PORT TIER1_CHARS=269 node bench/support/bare-proxy.mjs  (prints its port)
 */
import { createServer } from 'node:http';
import { MEMORY_TOOLS, OpenAiChatAdapter } from '@engram/gateway-engine';
import { Pool } from 'undici';

const upstream = new Pool(process.env.UPSTREAM, { connections: 256 });
const adapter = new OpenAiChatAdapter();
const tier1Block = `<engram-memory>${'x'.repeat(Math.max(0, Number(process.env.TIER1_CHARS ?? 269) - 31))}</engram-memory>`;

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', async () => {
    const parsed = adapter.parseRequest(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    const body = adapter.serializeRequest(adapter.withMemory(parsed, { tier1Block, tools: MEMORY_TOOLS }));
    const answer = await upstream.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body });
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    if (!adapter.passesUnchanged(bytes.toString('utf8'))) throw new Error('the bench upstream answered with memory calls');
    response.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': String(bytes.length) });
    response.end(bytes);
  });
});
server.listen(0, '127.0.0.1', () => console.log(String(server.address().port)));
