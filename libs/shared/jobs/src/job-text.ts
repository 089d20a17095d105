/**
 * Whether a job's data carries a text a purge must forget: any string in it (an exchange, a
 * suggestion) contains the text, compared without case and with runs of whitespace as one space, so
 * a fact quoted from a longer message still matches. Only extraction jobs carry text today; the
 * others carry ids, which never contain a memory's words.
 */
export function jobDataHolds(data: unknown, text: string): boolean {
  const needle = normalise(text);
  if (needle === '') return false;
  return strings(data).some((value) => normalise(value).includes(needle));
}

function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

function normalise(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}
