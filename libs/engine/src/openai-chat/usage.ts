/** Adds token counts field by field (nested details too), so usage covers every round of the loop. */
export function addUsage(total: Record<string, unknown> | null, next: Record<string, unknown>): Record<string, unknown> {
  if (total === null) return next;
  const sum: Record<string, unknown> = { ...total };
  for (const [key, value] of Object.entries(next)) {
    const before = sum[key];
    if (typeof value === 'number' && typeof before === 'number') sum[key] = before + value;
    else if (isRecord(value) && isRecord(before)) sum[key] = addUsage(before, value);
    else if (before === undefined) sum[key] = value;
  }
  return sum;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
