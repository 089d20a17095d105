import type { UpstreamReply } from './ports.js';

/** The whole body of an upstream reply. */
export function readAll(reply: UpstreamReply): Promise<Uint8Array> {
  return reply.bytes ? reply.bytes() : collect(reply.body);
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}
