/**
 * Memory's share of every upstream request, in o200k prompt tokens: the six memory tool definitions
 * plus a Tier 1 block filled to the default TIER1_MAX_CHARS (see libs/gateway/engine/src/prompt-tokens.ts
 * for how tools are counted), and, for comparison, the tokens of the tools' JSON as sent.
 */
import { loadConfig } from '@engram/config';
import { MEMORY_PROMPT_TOKEN_BUDGET, MEMORY_TOOLS, memoryPromptTokens, memoryToolsJsonTokens } from '@engram/gateway-engine';
import { fullTier1Block } from '../libs/gateway/engine/src/testing/full-tier1.js';
import type { BenchRow } from './run.js';

export async function run(): Promise<BenchRow[]> {
  const block = fullTier1Block(loadConfig({}).tier1MaxChars);
  const suite = 'prompt-tokens';
  return [
    {
      suite,
      metric: 'memory share per request (tools + full Tier 1)',
      value: await memoryPromptTokens(block, MEMORY_TOOLS),
      unit: 'tokens',
      target: `<= ${MEMORY_PROMPT_TOKEN_BUDGET}`,
    },
    { suite, metric: 'six tool definitions as the model reads them', value: await memoryPromptTokens('', MEMORY_TOOLS), unit: 'tokens' },
    { suite, metric: `full Tier 1 block (${block.length} chars)`, value: await memoryPromptTokens(block, []), unit: 'tokens' },
    { suite, metric: 'six tool definitions as JSON sent', value: await memoryToolsJsonTokens(MEMORY_TOOLS), unit: 'tokens' },
  ];
}
