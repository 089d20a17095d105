import { createHash } from 'node:crypto';

/** What a vector is keyed by (with the model): the same text is embedded once, whatever entry or replay it comes from. */
export function contentHash(content: string): string {
  return createHash('sha256').update(content).digest('base64url');
}
