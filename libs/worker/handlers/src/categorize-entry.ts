import { MemoryPattern } from '@engram/contracts';
import { categorizeContent, type Category } from '@engram/domain';
import type { CategorizeEntryData } from '@engram/jobs';
import { isAlreadySettled } from './memory-errors.js';
import type { MemoryPort } from './ports.js';

export type CategorizeOutcome =
  { readonly outcome: 'categorized'; readonly category: Category } | { readonly outcome: 'uncertain' | 'already-categorized' | 'archived' | 'gone' };

/**
 * Gives an uncategorized entry the category its keywords point at. Idempotent: an entry that has
 * a category (from an earlier run, a person or the model) is left alone.
 */
export async function categorizeEntry(memory: MemoryPort, data: CategorizeEntryData): Promise<CategorizeOutcome> {
  let entry;
  try {
    entry = await memory.call(MemoryPattern.Get, { pool: data.pool, id: data.memoryId });
  } catch (error) {
    if (isAlreadySettled(error)) return { outcome: 'gone' };
    throw error;
  }
  if (entry.isArchived) return { outcome: 'archived' };
  if (entry.category !== null) return { outcome: 'already-categorized' };
  const { category } = categorizeContent(entry.content);
  if (category === null) return { outcome: 'uncertain' };
  try {
    await memory.call(MemoryPattern.Categorize, {
      pool: data.pool,
      id: data.memoryId,
      category,
      actor: 'worker:categorize',
      causationId: data.eventId,
    });
  } catch (error) {
    if (isAlreadySettled(error)) return { outcome: 'gone' };
    throw error;
  }
  return { outcome: 'categorized', category };
}
