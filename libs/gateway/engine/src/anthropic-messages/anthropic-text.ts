/** The API rejects empty and whitespace-only text blocks, also when a client sends them back. */
export function isBlank(text: unknown): boolean {
  return typeof text !== 'string' || text.trim() === '';
}
