import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type pg from 'pg';
import type { Logger } from 'pino';

/** The SQL migrations, next to the package's src/ and dist/ alike (the image keeps the folder). */
const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations', import.meta.url));

/**
 * Creates or upgrades the event store's schema with node-pg-migrate, which records what it applied in
 * `engram_migrations` and holds an advisory lock meanwhile: replicas starting together wait for the
 * first, then find nothing left to do.
 */
export async function migrateEventStore(client: pg.ClientBase, logger: Logger): Promise<readonly string[]> {
  const applied = await runner({
    dbClient: client,
    dir: MIGRATIONS_DIR,
    migrationsTable: 'engram_migrations',
    direction: 'up',
    singleTransaction: true,
    advisoryLockMode: 'wait',
    log: (message: string) => logger.debug({ migration: message }, 'event store schema'),
  });
  const names = applied.map((migration) => migration.name);
  if (names.length > 0) logger.info({ migrations: names }, 'event store schema created or upgraded in PostgreSQL');
  return names;
}
