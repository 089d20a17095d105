import { afterEach, beforeEach } from '@jest/globals';
import { silentLogger, tempDataDir } from '@engram/testing';
import type { MemoryService } from '../writes/memory-service.js';
import { openMemoryService, type MemoryServiceOptions } from '../data-dir/open-memory-service.js';

/** Where the clock of every test starts. */
export const TEST_START = '2026-05-01T12:00:00.000Z';

export interface MemoryServiceUnderTest {
  /** The running test's service. */
  readonly service: MemoryService;
  /** The running test's data dir. */
  readonly dataDir: string;
  /** What the service's clock says: set it to move time. Back at TEST_START before each test. */
  now: Date;
  /** A restart: closes the service (if the test has not) and opens a new one on the same data dir. */
  reopen(): Promise<MemoryService>;
}

/**
 * A memory service on a fresh data dir before each test of the file, closed and deleted after it;
 * `options` for what a file needs beyond the defaults (e.g. hybrid search's embedder).
 */
export function memoryServicePerTest(options: Partial<Omit<MemoryServiceOptions, 'dataDir' | 'clock'>> = {}): MemoryServiceUnderTest {
  let current: { service: MemoryService; dir: ReturnType<typeof tempDataDir> } | null = null;
  const running = () => {
    if (!current) throw new Error('the memory service exists only while a test runs');
    return current;
  };
  const underTest: MemoryServiceUnderTest = {
    get service() {
      return running().service;
    },
    get dataDir() {
      return running().dir.path;
    },
    now: new Date(TEST_START),
    async reopen() {
      const test = running();
      await test.service.close();
      test.service = await open(test.dir.path);
      return test.service;
    },
  };
  const open = (dataDir: string) =>
    openMemoryService({ tier1MaxChars: 400, logger: silentLogger(), ...options, dataDir, clock: () => underTest.now });
  beforeEach(async () => {
    underTest.now = new Date(TEST_START);
    const dir = tempDataDir();
    current = { service: await open(dir.path), dir };
  });
  afterEach(async () => {
    const { service, dir } = running();
    current = null;
    await service.close();
    dir.remove();
  });
  return underTest;
}
