import { CONTENT_MAX_CHARS } from '@engram/domain';

/**
 * Facts a person stated explicitly about themselves or asked to be remembered, in their own message:
 * "remember that ...", "note that ...", "I prefer ...", "I always/never ...", "my ... is ...".
 * Deliberately narrow: a wrong memory costs more than a missed one, and the model has its own
 * `<MEMORY_SUGGEST>` markers and tools for the rest.
 */
const EXPLICIT = [
  /^(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?[:,]?\s+(.{8,})$/i,
  /^(I\s+(?:prefer|always|never|use|like|dislike|work)\b.{4,})$/i,
  /^(my\s+\w+(?:\s+\w+)?\s+(?:is|are)\b.{2,})$/i,
];

export function explicitFacts(userMessage: string): string[] {
  const facts: string[] = [];
  for (const sentence of userMessage.split(/(?<=[.!?])\s+|\n+/)) {
    const trimmed = sentence.trim().replace(/[.!?]+$/, '');
    if (trimmed.length === 0 || trimmed.endsWith('?')) continue;
    for (const pattern of EXPLICIT) {
      const match = pattern.exec(trimmed);
      const fact = match?.[1]?.trim();
      if (fact) {
        facts.push(fact.charAt(0).toUpperCase() + fact.slice(1));
        break;
      }
    }
  }
  return facts;
}

/** Whitespace folded, length capped at the content limit; empty means nothing to store. */
export function cleanSuggestion(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, CONTENT_MAX_CHARS);
}
