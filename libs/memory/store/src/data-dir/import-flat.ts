import type { Logger } from 'pino';
import type { EncryptionKey } from '@engram/config';
import type { MemoryType } from '@engram/domain';
import { MemoryError } from '@engram/contracts';
import { DataDir } from './data-dir.js';
import { FlatFiles } from '../flat-files/flat-files.js';
import { openMemoryService } from './open-memory-service.js';
import { validPool } from '../writes/validation.js';

export interface ImportFlatResult {
  readonly pool: string;
  readonly stored: number;
  readonly updated: number;
  readonly unchanged: number;
  /** Blocks of the files that could not be read as entries (first characters of each). */
  readonly skipped: readonly string[];
}

/**
 * `engram import-flat`: recovers a pool from its MEMORY.md and USER.md, through the service so every
 * change is an event. Entries missing from memory are stored under their old id; entries whose text,
 * category or type differ are updated; the rest are left alone. The files are read before the
 * service opens, because opening re-renders them.
 */
export async function importFlatFiles(
  root: string,
  poolName: string,
  logger: Logger,
  options: { readonly encryptionKey?: EncryptionKey | null } = {},
): Promise<ImportFlatResult> {
  const pool = validPool(poolName);
  const files = new FlatFiles(new DataDir(root), () => [], options.encryptionKey ?? null).read(pool);
  const service = await openMemoryService({ dataDir: root, tier1MaxChars: 400, logger, encryptionKey: options.encryptionKey ?? null });
  let stored = 0;
  let updated = 0;
  let unchanged = 0;
  try {
    const meta = { pool, actor: 'cli:import-flat' as const, causationId: null };
    for (const type of ['USER', 'MEMORY'] as const satisfies readonly MemoryType[]) {
      for (const entry of files[type].entries) {
        const existing = await service.get({ pool, id: entry.id }).catch((error: unknown) => {
          if (error instanceof MemoryError && error.code === 'not_found') return undefined;
          throw error;
        });
        if (!existing) {
          const request = { ...meta, content: entry.content, category: entry.category, type, source: 'import' as const };
          // An id another pool already uses gets a new one rather than failing the whole import.
          await service.store({ ...request, id: entry.id }).catch((error: unknown) => {
            if (error instanceof MemoryError && error.code === 'conflict') return service.store(request);
            throw error;
          });
          stored += 1;
        } else if (existing.content !== entry.content.trim() || existing.category !== entry.category || existing.type !== type) {
          await service.update({ ...meta, id: entry.id, content: entry.content, category: entry.category, type });
          updated += 1;
        } else {
          unchanged += 1;
        }
      }
    }
  } finally {
    await service.close();
  }
  const skipped = [...files.USER.skipped, ...files.MEMORY.skipped];
  logger.info({ pool, stored, updated, unchanged, skipped: skipped.length }, 'imported flat files');
  return { pool, stored, updated, unchanged, skipped };
}
