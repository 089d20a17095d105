/** The first item of a client's list that is not a JSON object, described as the providers' errors do, or null. */
export function firstNonObject(items: readonly unknown[]): { readonly index: number; readonly got: string } | null {
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return { index, got: describeJsonValue(item) };
  }
  return null;
}

function describeJsonValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}
