import type { AnthropicRequest } from '../anthropic-messages/anthropic-types.js';

/** A one-message Anthropic Messages request, as a client would send it. */
export const askAnthropic = (content: string, extra: Partial<AnthropicRequest> = {}): AnthropicRequest => ({
  model: 'claude-x',
  max_tokens: 100,
  messages: [{ role: 'user', content }],
  ...extra,
});
