import type * as Gpt4oTokenizer from 'gpt-tokenizer/model/gpt-4o';
import type { MemoryToolDefinition } from './turn.js';

/** Memory's share of one upstream request may cost at most this many prompt tokens at default settings. */
export const MEMORY_PROMPT_TOKEN_BUDGET = 400;

type Tokenizer = typeof Gpt4oTokenizer;
let tokenizer: Promise<Tokenizer> | undefined;

/**
 * The prompt tokens memory adds to a request: the Tier 1 block appended to the system message plus
 * the memory tools, counted with the o200k tokenizer the way OpenAI bills function definitions
 * (rendered as the `namespace functions` text the model reads, not as the JSON that is sent).
 * Measured as the difference between a request with and without them, so the system message's own
 * framing is not charged to memory. The tokenizer's tables (~70 MB, ~0.3 s) load on first use.
 */
export async function memoryPromptTokens(tier1Block: string, tools: readonly MemoryToolDefinition[]): Promise<number> {
  tokenizer ??= import('gpt-tokenizer/model/gpt-4o');
  const { countChatCompletionTokens } = await tokenizer;
  if (!countChatCompletionTokens) throw new Error('gpt-tokenizer no longer counts function definitions for gpt-4o');
  const system = 'You are a helpful assistant.';
  const bare = countChatCompletionTokens({ messages: [{ role: 'system', content: system }] });
  const withMemory = countChatCompletionTokens({
    messages: [{ role: 'system', content: tier1Block === '' ? system : `${system}\n\n${tier1Block}` }],
    ...(tools.length > 0
      ? { functions: tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters as never })) }
      : {}),
  });
  return withMemory - bare;
}

/** o200k tokens of the JSON that is sent for the tools (an upper bound for providers that read the schema as JSON). */
export async function memoryToolsJsonTokens(tools: readonly MemoryToolDefinition[]): Promise<number> {
  tokenizer ??= import('gpt-tokenizer/model/gpt-4o');
  const { countTokens } = await tokenizer;
  return countTokens(JSON.stringify(tools.map((tool) => ({ type: 'function', function: tool }))));
}
