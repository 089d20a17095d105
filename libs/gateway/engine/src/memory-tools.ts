import { CATEGORIES, MEMORY_TYPES } from '@engram/domain';
import type { MemoryToolDefinition } from './turn.js';

const text = { type: 'string' } as const;
const id = text;
const limit = { type: 'integer' } as const;

/**
 * The six memory tools offered to the model, in the fixed order they are appended after the
 * client's tools. Frozen, so every request offers byte-identical definitions (prompt caching).
 *
 * Lean on purpose: they ride along on every request (see prompt-tokens.ts for the budget). Only
 * what the model reads is kept: names, one-line descriptions, types, enums and `required`.
 * Bounds (lengths, limits) are enforced by the executor, which answers a readable error, so they
 * are not repeated here; the category list is spelled out once, on store_memory.
 */
export const MEMORY_TOOLS: readonly MemoryToolDefinition[] = Object.freeze([
  {
    name: 'store_memory',
    description: 'Save a lasting, self-contained fact for later chats; no secrets. Unsure? Reply with <MEMORY_SUGGEST>fact</MEMORY_SUGGEST> instead.',
    parameters: {
      type: 'object',
      properties: { content: text, type: { type: 'string', enum: [...MEMORY_TYPES] }, category: { type: 'string', enum: [...CATEGORIES] } },
      required: ['content'],
    },
  },
  {
    name: 'memory_search',
    description: 'Search memory for facts not in <engram-memory>.',
    parameters: { type: 'object', properties: { query: text, limit }, required: ['query'] },
  },
  {
    name: 'memory_list',
    description: 'List entries, best first.',
    parameters: { type: 'object', properties: { category: text, limit } },
  },
  {
    name: 'memory_update',
    description: 'Fix an entry; confirmed=true if the user confirms it.',
    parameters: { type: 'object', properties: { id, content: text, category: text, confirmed: { type: 'boolean' } }, required: ['id'] },
  },
  {
    name: 'memory_delete',
    description: 'Archive a wrong or obsolete entry.',
    parameters: { type: 'object', properties: { id, reason: text }, required: ['id'] },
  },
  {
    name: 'memory_refresh',
    description: 'Mark an entry still true so it does not fade.',
    parameters: { type: 'object', properties: { id }, required: ['id'] },
  },
] satisfies MemoryToolDefinition[]);

/** What a memory call beyond the round limit gets back. */
export const MEMORY_LIMIT_MESSAGE = 'No more memory searches this turn. Use what you have.';

const NO_TOOLS: readonly MemoryToolDefinition[] = Object.freeze([]);

/** The memory tools each request is offered: none when the loop may run no memory round (MEMORY_TOOL_MAX_ITERATIONS=0). */
export function memoryToolsOffered(maxIterations: number): readonly MemoryToolDefinition[] {
  return maxIterations > 0 ? MEMORY_TOOLS : NO_TOOLS;
}
