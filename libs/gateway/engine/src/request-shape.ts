import { clientError } from './errors.js';
import { firstNonObject } from './non-object-item.js';

/** A client's parsed body as the adapter's request type, once it is a JSON object (else a 400, in the same words on every surface). */
export function objectBody<T>(body: unknown): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw clientError(400, 'the request body must be a JSON object', 'invalid_body');
  }
  return body as T;
}

/** OpenAI's check of `tools` (Chat Completions and Responses): absent, or an array of objects; refused in OpenAI's words. */
export function checkOpenAiTools(tools: unknown): void {
  if (tools === undefined) return;
  if (!Array.isArray(tools)) throw clientError(400, '`tools` must be an array', 'invalid_tools');
  const badTool = firstNonObject(tools);
  if (badTool) {
    throw clientError(400, `Invalid type for 'tools[${badTool.index}]': expected an object, but got ${badTool.got} instead.`, 'invalid_type');
  }
}

/**
 * The parts of a content list that are JSON objects. Engram reads a client's content only to find its
 * text (what the person said, for extraction) and forwards the request as sent, so a malformed part (a
 * null, a number) is skipped here and left for the upstream to judge, never a TypeError in the turn.
 */
export function objectParts<T extends object = Record<string, unknown>>(content: unknown): T[] {
  if (!Array.isArray(content)) return [];
  return content.filter((part): part is T => typeof part === 'object' && part !== null && !Array.isArray(part));
}
