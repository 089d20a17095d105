import type { EngramConfig } from '@engram/config';
import type { ChatMessage, LlmPort } from '@engram/worker-handlers';
import OpenAI from 'openai';

const OPENAI_HOST = 'api.openai.com';
/** A consolidation call is one small non-streaming completion; a minute is generous. */
const CALL_TIMEOUT_MS = 60_000;

/** One chat completion through the official SDK to the configured upstream. */
export class OpenAiLlmRepository implements LlmPort {
  constructor(private readonly client: OpenAI) {}

  async complete(request: { model: string; messages: readonly ChatMessage[]; json: boolean }): Promise<string> {
    const completion = await this.client.chat.completions.create({
      model: request.model,
      messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
      temperature: 0,
      ...(request.json ? { response_format: { type: 'json_object' as const } } : {}),
    });
    return completion.choices[0]?.message?.content ?? '';
  }
}

/**
 * The upstream for consolidation, or null for the deterministic merge only: when the model is
 * `off`, or when the upstream is OpenAI itself and no key is configured (the worker has no client
 * bearer to forward). A self-hosted upstream without a key is called without one.
 */
export function createLlm(config: EngramConfig): LlmPort | null {
  if (config.consolidation.model === 'off') return null;
  const { baseUrl, apiKey, timeoutMs } = config.upstream;
  if (!apiKey && new URL(baseUrl).hostname === OPENAI_HOST) return null;
  const client = new OpenAI({
    baseURL: baseUrl,
    apiKey: apiKey ?? 'no-key',
    timeout: Math.min(timeoutMs, CALL_TIMEOUT_MS),
    // The consolidation itself retries once with the reason, then falls back; SDK retries would only delay that.
    maxRetries: 0,
  });
  return new OpenAiLlmRepository(client);
}
