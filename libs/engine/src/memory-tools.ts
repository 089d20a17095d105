import { CATEGORIES, CONTENT_MAX_CHARS, MEMORY_TYPES } from '@engram/domain';
import type { MemoryToolDefinition } from './turn.js';

const category = {
  type: 'string',
  enum: [...CATEGORIES],
  description:
    'preference (how the user likes things), person (who they are, people they work with), environment (machines, OS, shell, tools), project (facts about a codebase or piece of work), decision (a choice made and why), gotcha (a pitfall and its fix).',
} as const;

/**
 * The six memory tools offered to the model, in the fixed order they are appended after the
 * client's tools. Frozen, so every request offers byte-identical definitions (prompt caching).
 */
export const MEMORY_TOOLS: readonly MemoryToolDefinition[] = Object.freeze([
  {
    name: 'store_memory',
    description:
      'Save one durable fact worth remembering in later conversations: a user preference, a fact about the user, their environment or project, a decision and its reason, or a gotcha. One self-contained fact per call, written so it makes sense without this conversation. Do not store secrets or passing details. For a fact you are unsure is worth keeping, you may instead write <MEMORY_SUGGEST>the fact</MEMORY_SUGGEST> in your reply: it is removed before the user sees it and reviewed later.',
    parameters: {
      type: 'object',
      properties: {
        content: { type: 'string', minLength: 1, maxLength: CONTENT_MAX_CHARS, description: 'The fact, in one or two plain sentences.' },
        type: { type: 'string', enum: [...MEMORY_TYPES], description: 'USER for facts about the person (preferences, style); MEMORY for facts about work. Default MEMORY.' },
        category,
      },
      required: ['content'],
      additionalProperties: false,
    },
  },
  {
    name: 'memory_search',
    description:
      'Search long-term memory for facts not already listed in the memory block of the system prompt. Returns matching entries as "[id:...] content". Use specific keywords.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'Keywords to look for.' },
        limit: { type: 'integer', minimum: 1, maximum: 20, description: 'Most results to return (default 5).' },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
  {
    name: 'memory_list',
    description: 'List remembered entries, most relevant first, optionally of one category. Returns entries as "[id:...] content".',
    parameters: {
      type: 'object',
      properties: {
        category,
        limit: { type: 'integer', minimum: 1, maximum: 50, description: 'Most entries to return (default 10).' },
      },
      additionalProperties: false,
    },
  },
  {
    name: 'memory_update',
    description:
      'Correct or refine a remembered entry by id (from a "[id:...]" citation): new content, a category, or confirmed=true when the user confirmed the fact.',
    parameters: {
      type: 'object',
      properties: {
        id: { type: 'string', minLength: 1, description: 'The entry id, without the "id:" prefix.' },
        content: { type: 'string', minLength: 1, maxLength: CONTENT_MAX_CHARS, description: 'The corrected fact.' },
        category,
        confirmed: { type: 'boolean', description: 'True when the user has confirmed the fact.' },
      },
      required: ['id'],
      additionalProperties: false,
    },
  },
  {
    name: 'memory_delete',
    description: 'Forget an entry that is wrong or obsolete, by id. It is archived, and a person can restore it.',
    parameters: {
      type: 'object',
      properties: {
        id: { type: 'string', minLength: 1, description: 'The entry id, without the "id:" prefix.' },
        reason: { type: 'string', description: 'Why it no longer holds.' },
      },
      required: ['id'],
      additionalProperties: false,
    },
  },
  {
    name: 'memory_refresh',
    description: 'Mark an entry as still true and useful right now, by id, so it does not fade from memory.',
    parameters: {
      type: 'object',
      properties: { id: { type: 'string', minLength: 1, description: 'The entry id, without the "id:" prefix.' } },
      required: ['id'],
      additionalProperties: false,
    },
  },
] satisfies MemoryToolDefinition[]);

/** What a memory call beyond the round limit gets back. */
export const MEMORY_LIMIT_MESSAGE = 'No more memory searches this turn. Use what you have.';
