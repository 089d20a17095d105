import { createParser } from 'eventsource-parser';

/**
 * Server-sent events, both ways: upstream streams are read with eventsource-parser, client streams
 * are written with the frames below, so every surface frames its events the same way.
 */

/** One server-sent event as eventsource-parser yields it. */
export interface SseMessage {
  readonly event?: string | undefined;
  readonly data: string;
}

/** The frame that ends an OpenAI stream (Chat Completions). */
export const SSE_DONE = 'data: [DONE]\n\n';

/** One event as text: `data` as it is, with an `event:` line when it has a type. */
export function sseFrame(data: string, event?: string): string {
  return event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
}

/** A typed event whose data is `payload` as JSON (Anthropic's and Responses' frames). */
export function sseEvent(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
}

/** A message the rewrite does not touch, as the upstream framed it. */
export function sseVerbatim(message: SseMessage): string {
  return sseFrame(message.data, message.event);
}

/**
 * The events of a byte stream, batched by the chunk that completed them (an event split across
 * chunks comes with the chunk that ends it), so a reader can answer one network chunk with one write.
 */
export async function* sseBatches(body: AsyncIterable<Uint8Array>): AsyncIterable<readonly SseMessage[]> {
  let batch: SseMessage[] = [];
  const parser = createParser({ onEvent: (message: SseMessage) => batch.push(message) });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (batch.length > 0) {
      yield batch;
      batch = [];
    }
  }
  parser.feed(decoder.decode());
  parser.reset({ consume: true });
  if (batch.length > 0) yield batch;
}
