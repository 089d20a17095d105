/** Token usage as the formats report it: a record of counts, some nested (`*_details`). */
export type Usage = Record<string, unknown>;

/** Adds token counts field by field (nested details too), so usage covers every round of the loop. */
export function addUsage(total: Usage | null, next: Usage): Usage {
  if (total === null) return next;
  const sum: Usage = { ...total };
  for (const [key, value] of Object.entries(next)) {
    const before = sum[key];
    if (typeof value === 'number' && typeof before === 'number') sum[key] = before + value;
    else if (isRecord(value) && isRecord(before)) sum[key] = addUsage(before, value);
    else if (before === undefined) sum[key] = value;
  }
  return sum;
}

/** The usage of every round summed (rounds without one left out); null when none reported any. */
export function sumUsage(rounds: readonly { readonly usage?: Usage | null | undefined }[]): Usage | null {
  let total: Usage | null = null;
  for (const round of rounds) if (round.usage) total = addUsage(total, round.usage);
  return total;
}

function isRecord(value: unknown): value is Usage {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
