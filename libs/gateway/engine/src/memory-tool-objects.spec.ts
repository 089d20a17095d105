import { describe, expect, it } from '@jest/globals';
import { MEMORY_TOOLS } from './memory-tools.js';
import { MemoryToolObjects } from './memory-tool-objects.js';

const nameOf = (tool: object): unknown => (tool as { name?: unknown }).name;

describe('MemoryToolObjects', () => {
  const objects = new MemoryToolObjects((tool) => ({ name: tool.name, schema: tool.parameters }));

  it('renders the same objects every time, so a request serialises byte for byte the same', () => {
    const first = objects.render(MEMORY_TOOLS);
    expect(objects.render(MEMORY_TOOLS)).toBe(first);
    expect(first.map(nameOf)).toEqual(MEMORY_TOOLS.map((tool) => tool.name));
  });

  it("tells the client's tools from the appended ones, even a client tool with a memory tool's name", () => {
    const tools = [{ name: 'shell' }, { name: 'memory_search' }, 'not a tool', ...objects.render(MEMORY_TOOLS)];
    expect(objects.clientToolNames(tools, nameOf)).toEqual(new Set(['shell', 'memory_search']));
    expect(objects.clientToolNames(undefined, nameOf)).toEqual(new Set());
  });

  it('gives the JSON of a rendered list that ends the tools, for splicing', () => {
    const rendered = objects.render(MEMORY_TOOLS);
    const tools = [{ name: 'shell' }, ...rendered];
    const tail = objects.renderedTail(tools);
    expect(tail?.count).toBe(MEMORY_TOOLS.length);
    expect(`[${JSON.stringify(tools.slice(0, -rendered.length)).slice(1, -1)},${tail?.json}]`).toBe(JSON.stringify(tools));
    expect(objects.renderedTail([{ name: 'shell' }])).toBeNull();
    expect(objects.renderedTail(undefined)).toBeNull();
  });
});
