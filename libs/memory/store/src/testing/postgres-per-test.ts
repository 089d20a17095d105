import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from '@jest/globals';
import { silentLogger, startPostgres, tempDataDir, type TestDatabase, type TestPostgres } from '@engram/testing';
import type { MemoryService } from '../writes/memory-service.js';
import { openMemoryService } from '../data-dir/open-memory-service.js';

interface Closable {
  close(): Promise<void>;
}

export interface PostgresUnderTest {
  /** The file's server: `server.database()` for a database besides the test's. */
  readonly server: TestPostgres;
  /** The running test's database, empty when it starts. */
  readonly database: TestDatabase;
  /** The running test's folder, where its replicas keep their data dirs. */
  readonly dir: string;
  /** Closes it after the test, before its database is dropped; a close that fails then is ignored (the test may have cut its connection). */
  closeAfter<T extends Closable>(closable: T): T;
  /** Closes it now rather than after the test. */
  close(closable: Closable): Promise<void>;
  /** A memory service on the event store at `url` (the test's database by default), its data dir `name` in the test's folder. */
  memoryReplica(name: string, url?: string): Promise<MemoryService>;
}

/**
 * PostgreSQL for the medium specs of replicas on one event store: one server for the file, a fresh
 * database and folder before each test, and after it whatever the test opened closed, then both removed.
 */
export function postgresPerTest(): PostgresUnderTest {
  let server: TestPostgres | null = null;
  let current: { database: TestDatabase; dir: ReturnType<typeof tempDataDir>; open: Closable[] } | null = null;
  const running = () => {
    if (!current) throw new Error('the database exists only while a test runs');
    return current;
  };
  const underTest: PostgresUnderTest = {
    get server() {
      if (!server) throw new Error('the server starts before the file’s first test');
      return server;
    },
    get database() {
      return running().database;
    },
    get dir() {
      return running().dir.path;
    },
    closeAfter(closable) {
      running().open.push(closable);
      return closable;
    },
    async close(closable) {
      const { open } = running();
      open.splice(open.indexOf(closable), 1);
      await closable.close();
    },
    async memoryReplica(name, url = underTest.database.url) {
      const service = await openMemoryService({
        dataDir: join(underTest.dir, name),
        tier1MaxChars: 400,
        logger: silentLogger(),
        eventStore: { url, pollMs: 100 },
      });
      return underTest.closeAfter(service);
    },
  };
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(async () => {
    current = { database: await underTest.server.database(), dir: tempDataDir(), open: [] };
  });
  afterEach(async () => {
    const { database, dir, open } = running();
    current = null;
    await Promise.all(open.map((closable) => closable.close().catch(() => undefined)));
    await database.drop();
    dir.remove();
  });
  return underTest;
}
