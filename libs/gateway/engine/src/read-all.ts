import type { UpstreamReply } from './ports.js';

/** The whole body of an upstream reply. */
export async function readAll(reply: UpstreamReply): Promise<Uint8Array> {
  if (reply.bytes) return reply.bytes();
  const chunks: Uint8Array[] = [];
  for await (const chunk of reply.body) chunks.push(chunk);
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}
