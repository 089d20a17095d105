import { exchangeIdOf, type ExtractExchangeData } from '@engram/jobs';
import type { ClientView } from './client-view.js';
import type { TurnContext } from './turn.js';

/** The extraction job for an exchange whose answer carried `<MEMORY_SUGGEST>` markers; null when it had none. */
export function extractionFor(view: ClientView, context: TurnContext, lastUserText: string): ExtractExchangeData | null {
  const suggestions = view.suggestions();
  if (suggestions.length === 0) return null;
  const exchange = {
    pool: context.pool,
    suggestions: [...suggestions],
    exchange: { user: lastUserText, assistant: view.visibleText() },
    requestId: context.requestId,
  };
  return { ...exchange, exchangeId: exchangeIdOf(exchange) };
}
