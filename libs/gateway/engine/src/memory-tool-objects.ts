import type { MemoryToolDefinition } from './turn.js';

/**
 * The memory tools as one format's tool objects, and how they are told apart from the client's
 * own. `withMemory` appends `render(definitions)` to the client's tools; the loop later asks the
 * adapter for the client's tool names in that same request, so the objects rendered here are
 * recognised by identity (a client tool that happens to be called `memory_search` stays the
 * client's). Rendered once per definition list: byte-identical requests stay byte-identical.
 */
export class MemoryToolObjects {
  private readonly rendered = new WeakMap<readonly MemoryToolDefinition[], readonly object[]>();
  private readonly ours = new WeakSet<object>();
  /** Each rendered list's length and JSON (without brackets), by the list's last object. */
  private readonly tails = new WeakMap<object, RenderedTail>();

  constructor(private readonly toFormat: (tool: MemoryToolDefinition) => object) {}

  /** The format's tool objects for `definitions` (the same objects every time). */
  render(definitions: readonly MemoryToolDefinition[]): readonly object[] {
    const cached = this.rendered.get(definitions);
    if (cached) return cached;
    const tools = definitions.map(this.toFormat);
    for (const tool of tools) this.ours.add(tool);
    const last = tools[tools.length - 1];
    if (last) this.tails.set(last, { count: tools.length, json: JSON.stringify(tools).slice(1, -1) });
    this.rendered.set(definitions, tools);
    return tools;
  }

  /** Names of the client's tools in `tools`, the ones `render` made left out. */
  clientToolNames(tools: readonly unknown[] | undefined, nameOf: (tool: object) => unknown): ReadonlySet<string> {
    const names = new Set<string>();
    for (const tool of tools ?? []) {
      if (typeof tool !== 'object' || tool === null || this.ours.has(tool)) continue;
      const name = nameOf(tool);
      if (typeof name === 'string') names.add(name);
    }
    return names;
  }

  /**
   * When `tools` ends with a whole rendered list: how many tools that list has and its JSON
   * (without brackets), so a serialiser can splice the text in instead of stringifying it again.
   */
  renderedTail(tools: readonly unknown[] | undefined): RenderedTail | null {
    const last = tools?.[tools.length - 1];
    return typeof last === 'object' && last !== null ? (this.tails.get(last) ?? null) : null;
  }
}

export interface RenderedTail {
  readonly count: number;
  readonly json: string;
}
