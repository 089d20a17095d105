import { describe, expect, it } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import { createMemoryMcpServer, MemoryToolExecutor, type MemoryPort } from '@engram/gateway-engine';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { memoryServicePerTest } from '../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess, observed } from '../../support/memory-in-process.js';

async function connect(memory: MemoryPort): Promise<Client> {
  const server = createMemoryMcpServer({ pool: 'alpha', requestId: 'req-1' }, { memory, tools: new MemoryToolExecutor(memory) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'spec', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

describe('the memory MCP server against the real memory service', () => {
  const under = memoryServicePerTest();
  const memory = memoryInProcess(() => under.service);
  const storeAll = (pool: string, contents: readonly string[]) =>
    Promise.all(contents.map((content) => memory.call(MemoryPattern.Store, { pool, actor: 'user', content, category: 'preference' })));

  it('runs the tools through the executor as actor mcp, caused by the request', async () => {
    const recorded = observed(memory);
    const client = await connect(recorded);
    const stored = (await client.callTool({ name: 'store_memory', arguments: { content: 'uses fish shell' } })) as CallToolResult;
    expect(stored).toEqual({
      content: [{ type: 'text', text: expect.stringMatching(/^Stored \[id:[a-z0-9-]+\] uses fish shell$/) }],
      isError: false,
    });
    const found = (await client.callTool({ name: 'memory_search', arguments: { query: 'fish shell' } })) as CallToolResult;
    expect(found.content).toEqual([{ type: 'text', text: expect.stringContaining('uses fish shell') }]);
    const [event] = await memory.call(MemoryPattern.EventsAfter, { after: 0 });
    expect(event).toMatchObject({ type: 'memory.stored', pool: 'alpha', actor: 'mcp', causationId: 'req-1', data: { source: 'llm' } });
    expect(recorded.calls.find((r) => r.pattern === MemoryPattern.Search)?.request).toMatchObject({
      pool: 'alpha',
      actor: 'mcp',
      recordReference: true,
      requestId: 'req-1',
    });
  });

  it('answers a call that fails, even with memory down, as a tool error rather than a protocol error', async () => {
    // Memory down: the real service, stopped.
    await under.service.close();
    const client = await connect(memory);
    const result = (await client.callTool({ name: 'memory_search', arguments: { query: 'x' } })) as CallToolResult;
    expect(result).toEqual({ content: [{ type: 'text', text: 'Error: memory is unavailable right now. Answer without it.' }], isError: true });
    const malformed = (await client.callTool({ name: 'memory_search', arguments: { limit: 'ten' } })) as CallToolResult;
    expect(malformed.isError).toBe(true);
  });

  it('lists Tier 1 first, then the entries a page at a time', async () => {
    const ids = (
      await storeAll(
        'alpha',
        Array.from({ length: 150 }, (_, i) => `fact ${i}`),
      )
    ).map((entry) => entry.id);
    const client = await connect(memory);
    const first = await client.listResources();
    expect(first.resources[0]?.uri).toBe('engram://pools/alpha/tier1');
    expect(first.resources).toHaveLength(101);
    expect(first.nextCursor).toBe('100');
    const second = await client.listResources({ cursor: first.nextCursor! });
    expect(second.resources).toHaveLength(50);
    expect(second.nextCursor).toBeUndefined();
    const listed = [...first.resources.slice(1), ...second.resources].map((resource) => resource.uri);
    expect(listed.sort()).toEqual(ids.map((id) => `engram://pools/alpha/memories/${id}`).sort());
    await expect(client.listResources({ cursor: '../etc' })).rejects.toMatchObject({ code: -32602 });
  });

  it('reads Tier 1 and an entry of its own pool, and nothing of another pool', async () => {
    const [mine] = await storeAll('alpha', ['prefers tabs over spaces']);
    const [theirs] = await storeAll('beta', ['prefers spaces over tabs']);
    const client = await connect(memory);
    const tier1 = await memory.call(MemoryPattern.Tier1, { pool: 'alpha' });
    expect(tier1.block).toContain('prefers tabs over spaces');
    expect((await client.readResource({ uri: 'engram://pools/alpha/tier1' })).contents).toEqual([
      { uri: 'engram://pools/alpha/tier1', mimeType: 'text/plain', text: tier1.block },
    ]);
    const read = await client.readResource({ uri: `engram://pools/alpha/memories/${mine!.id}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: mine!.id, content: 'prefers tabs over spaces' });
    await expect(client.readResource({ uri: `engram://pools/beta/memories/${theirs!.id}` })).rejects.toMatchObject({ code: -32002 });
    await expect(client.readResource({ uri: `engram://pools/alpha/memories/${theirs!.id}` })).rejects.toMatchObject({ code: -32002 });
    await expect(client.readResource({ uri: 'engram://pools/alpha/memories/no-such-entry' })).rejects.toMatchObject({ code: -32002 });
    await expect(client.readResource({ uri: 'file:///etc/passwd' })).rejects.toMatchObject({ code: -32002 });
  });
});
