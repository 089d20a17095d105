/**
 * The wire-independent representation of one model turn. Adapters translate their format
 * (OpenAI Chat, Anthropic Messages, OpenAI Responses) to and from these shapes; the tool loop,
 * Tier 1 injection, marker stripping and extraction only ever see these.
 */

/** One tool call of the model, arguments as the raw JSON text the model produced. */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** Why the model stopped, in OpenAI Chat spelling; adapters map their own reasons onto it and back. */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | (string & {});

/** One upstream response (one round of the loop), as the model produced it: nothing hidden yet. */
export interface ModelTurn {
  /** All assistant text of the round, markers included. */
  readonly text: string;
  /** Every tool call of the round, memory and client, in the order the model made them. */
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: FinishReason | null;
  /**
   * The round's output in the format's own shape (Anthropic content blocks, Responses output
   * items), for `withMemoryRound`: some formats must send it back whole (thinking blocks and
   * their signatures, reasoning items), which text and calls alone cannot rebuild.
   */
  readonly raw?: unknown;
}

/** The answer to one tool call, as the model will read it. */
export interface ToolResult {
  readonly callId: string;
  readonly name: string;
  readonly content: string;
  /** The call failed (bad arguments, unknown id, memory down); `content` says why, for the model. */
  readonly isError?: boolean;
}

/**
 * What the loop appends to the conversation after a memory round: the assistant message
 * (its text and its memory calls) followed by one result per call.
 */
export interface MemoryRound {
  readonly text: string;
  readonly calls: readonly ToolCall[];
  readonly results: readonly ToolResult[];
  /** The round's `ModelTurn.raw`, when the adapter produced one. */
  readonly raw?: unknown;
}

/** A memory tool as offered to the model: a format-independent JSON Schema function. */
export interface MemoryToolDefinition {
  readonly name: MemoryToolName;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

export const MEMORY_TOOL_NAMES = ['store_memory', 'memory_search', 'memory_list', 'memory_update', 'memory_delete', 'memory_refresh'] as const;
export type MemoryToolName = (typeof MEMORY_TOOL_NAMES)[number];

export function isMemoryToolName(name: string): name is MemoryToolName {
  return (MEMORY_TOOL_NAMES as readonly string[]).includes(name);
}

/** Who and where a turn runs for; carried into memory requests and the extraction job. */
export interface TurnContext {
  readonly pool: string;
  readonly requestId: string;
  /** The entries of the Tier 1 block given to the model in this request: memory_search does not repeat them. */
  readonly tier1Ids?: readonly string[];
}
