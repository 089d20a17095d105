import OpenAI from 'openai';
import type { RecordedRequest } from './scripted-http.js';

/**
 * The conversation that proves a deployment works, shared by the compose topology test and
 * ops/compose-smoke.sh: one turn asks the model to remember a fact (it calls store_memory, which
 * the gateway runs and hides), the next turn gets the fact back through Tier 1 injection.
 */
export const DEPLOY_FACT = 'The user deploys with docker compose on a NAS';
export const STORE_REQUEST_ID = 'compose-e2e-store';

/** The scripted model: stores the fact when told to remember, answers from its system prompt otherwise. */
export function scriptedMemoryModel(request: RecordedRequest): Record<string, unknown> {
  const messages = (request.body['messages'] ?? []) as { role: string; content?: string | null }[];
  const last = messages.at(-1);
  const system = messages
    .filter((message) => message.role === 'system')
    .map((message) => message.content ?? '')
    .join('\n');
  if (last?.role === 'tool') return completion({ role: 'assistant', content: 'Noted.' });
  if (last?.content?.startsWith('Remember')) {
    const args = JSON.stringify({ content: DEPLOY_FACT, type: 'USER', category: 'environment' });
    return completion(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_store_1', type: 'function', function: { name: 'store_memory', arguments: args } }],
      },
      'tool_calls',
    );
  }
  return completion({
    role: 'assistant',
    content: system.includes(DEPLOY_FACT) ? 'With docker compose, on your NAS.' : 'I do not know how you deploy.',
  });
}

function completion(message: Record<string, unknown>, finishReason = 'stop'): Record<string, unknown> {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: 'gpt-4.1-mini',
    choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

export interface ConversationOutcome {
  readonly storeAnswer: string | null | undefined;
  /** Tool calls the client saw in the store turn: memory tools must stay hidden. */
  readonly storeToolCalls: readonly unknown[];
  readonly storeRequestId: string | null;
  readonly recallAnswer: string | null | undefined;
}

/** Drives the two turns with the official OpenAI SDK against `${gatewayUrl}/v1`. */
export async function storeThenRecall(gatewayUrl: string): Promise<ConversationOutcome> {
  const client = new OpenAI({ baseURL: `${gatewayUrl}/v1`, apiKey: 'sk-client', maxRetries: 0 });
  const stored = await client.chat.completions
    .create(
      { model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'Remember: I deploy with docker compose on a NAS.' }] },
      { headers: { 'x-request-id': STORE_REQUEST_ID } },
    )
    .withResponse();
  const recalled = await client.chat.completions.create({
    model: 'gpt-4.1-mini',
    messages: [{ role: 'user', content: 'How do I deploy my apps?' }],
  });
  return {
    storeAnswer: stored.data.choices[0]?.message.content,
    storeToolCalls: stored.data.choices[0]?.message.tool_calls ?? [],
    storeRequestId: stored.response.headers.get('x-request-id'),
    recallAnswer: recalled.choices[0]?.message.content,
  };
}
