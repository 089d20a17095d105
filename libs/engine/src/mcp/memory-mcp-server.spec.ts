import { MemoryError, MemoryPattern, type MemoryContract } from '@engram/contracts';
import type { MemoryEntry } from '@engram/domain';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from '@jest/globals';
import { memoryEntry } from '@engram/testing';
import { MemoryToolExecutor } from '../memory-tool-executor.js';
import type { MemoryPort } from '../ports.js';
import { createMemoryMcpServer } from './memory-mcp-server.js';

function entry(id: string, content: string): MemoryEntry {
  return memoryEntry(id, { pool: 'alpha', content });
}

/** A memory service double holding `count` entries of pool alpha; `down` makes every call fail as unreachable. */
function fakeMemory(count: number, { down = false } = {}): MemoryPort & { requests: { pattern: string; request: Record<string, unknown> }[] } {
  const entries = Array.from({ length: count }, (_, i) => entry(`m${i}`, `fact ${i}`));
  const requests: { pattern: string; request: Record<string, unknown> }[] = [];
  return {
    requests,
    call: (async (pattern: keyof MemoryContract, request: Record<string, unknown>) => {
      requests.push({ pattern, request });
      if (down) throw new MemoryError('unavailable', 'memory did not answer');
      switch (pattern) {
        case MemoryPattern.Store:
          return entry('new1', String(request['content']));
        case MemoryPattern.Search:
          return entries.slice(0, 1).map((found) => ({ entry: found, score: 1, effectiveConfidence: 0.9 }));
        case MemoryPattern.List: {
          const offset = Number(request['offset'] ?? 0);
          return entries.slice(offset, offset + Number(request['limit']));
        }
        case MemoryPattern.Get: {
          const found = entries.find((candidate) => candidate.id === request['id']);
          if (!found) throw new MemoryError('not_found', `no memory ${String(request['id'])}`);
          return found;
        }
        case MemoryPattern.Tier1:
          return { pool: 'alpha', block: '<engram-memory>\nfact 0\n</engram-memory>', ids: ['m0'], seq: 1 };
        default:
          throw new MemoryError('internal', `not scripted: ${pattern}`);
      }
    }) as MemoryPort['call'],
  };
}

async function connect(memory: MemoryPort): Promise<Client> {
  const server = createMemoryMcpServer({ pool: 'alpha', requestId: 'req-1' }, { memory, tools: new MemoryToolExecutor(memory) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'spec', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

describe('memory MCP server', () => {
  it('runs the tools through the executor as actor mcp, with the request id', async () => {
    const memory = fakeMemory(3);
    const client = await connect(memory);
    const stored = (await client.callTool({ name: 'store_memory', arguments: { content: 'uses fish shell' } })) as CallToolResult;
    expect(stored).toEqual({ content: [{ type: 'text', text: 'Stored [id:new1] uses fish shell' }], isError: false });
    await client.callTool({ name: 'memory_search', arguments: { query: 'fact' } });
    expect(memory.requests.find((r) => r.pattern === MemoryPattern.Store)?.request).toMatchObject({
      pool: 'alpha',
      actor: 'mcp',
      source: 'llm',
      requestId: 'req-1',
    });
    expect(memory.requests.find((r) => r.pattern === MemoryPattern.Search)?.request).toMatchObject({
      pool: 'alpha',
      actor: 'mcp',
      recordReference: true,
      requestId: 'req-1',
    });
  });

  it('answers a call that fails, even with memory down, as a tool error rather than a protocol error', async () => {
    const client = await connect(fakeMemory(0, { down: true }));
    const result = (await client.callTool({ name: 'memory_search', arguments: { query: 'x' } })) as CallToolResult;
    expect(result).toEqual({ content: [{ type: 'text', text: 'Error: memory is unavailable right now. Answer without it.' }], isError: true });
    const malformed = (await client.callTool({ name: 'memory_search', arguments: { limit: 'ten' } })) as CallToolResult;
    expect(malformed.isError).toBe(true);
  });

  it('lists Tier 1 first, then the entries a page at a time', async () => {
    const memory = fakeMemory(150);
    const client = await connect(memory);
    const first = await client.listResources();
    expect(first.resources[0]?.uri).toBe('engram://pools/alpha/tier1');
    expect(first.resources).toHaveLength(101);
    expect(first.nextCursor).toBe('100');
    const second = await client.listResources({ cursor: first.nextCursor! });
    expect(second.resources.map((resource) => resource.uri)).toEqual(
      Array.from({ length: 50 }, (_, i) => `engram://pools/alpha/memories/m${100 + i}`),
    );
    expect(second.nextCursor).toBeUndefined();
    await expect(client.listResources({ cursor: '../etc' })).rejects.toMatchObject({ code: -32602 });
  });

  it('reads Tier 1 and an entry of its own pool, and nothing of another pool', async () => {
    const client = await connect(fakeMemory(2));
    expect((await client.readResource({ uri: 'engram://pools/alpha/tier1' })).contents).toEqual([
      { uri: 'engram://pools/alpha/tier1', mimeType: 'text/plain', text: '<engram-memory>\nfact 0\n</engram-memory>' },
    ]);
    const read = await client.readResource({ uri: 'engram://pools/alpha/memories/m1' });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: 'm1', content: 'fact 1' });
    await expect(client.readResource({ uri: 'engram://pools/beta/memories/m1' })).rejects.toMatchObject({ code: -32002 });
    await expect(client.readResource({ uri: 'engram://pools/alpha/memories/m9' })).rejects.toMatchObject({ code: -32002 });
    await expect(client.readResource({ uri: 'file:///etc/passwd' })).rejects.toMatchObject({ code: -32002 });
  });
});
