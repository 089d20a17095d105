import { MemoryPattern } from '@engram/contracts';
import type { MemoryEntry } from '@engram/domain';
import { LIST_LIMIT, type MemoryPort } from './ports.js';

/**
 * Every active entry of a pool, page by page. Read whole before acting: archiving while paging
 * would shift later pages and skip entries.
 */
export async function listAllActive(memory: MemoryPort, pool: string): Promise<MemoryEntry[]> {
  const all: MemoryEntry[] = [];
  for (let offset = 0; ; offset += LIST_LIMIT) {
    const page = await memory.call(MemoryPattern.List, { pool, archived: false, limit: LIST_LIMIT, offset });
    all.push(...page);
    if (page.length < LIST_LIMIT) return all;
  }
}
