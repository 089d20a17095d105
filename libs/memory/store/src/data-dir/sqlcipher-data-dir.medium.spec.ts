import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EncryptionKey } from '@engram/config';
import type { Embedder } from '@engram/embeddings';
import { ClusteredVectors, filesContaining, silentLogger, tempDataDir } from '@engram/testing';
import { backupDataDir } from './backup.js';
import { convertDataDir } from './data-dir-conversion.js';
import { ENCRYPTION_MARKER_FILE, type EncryptionMarker } from './data-dir-encryption.js';
import type { MemoryService } from '../writes/memory-service.js';
import { openMemoryService } from './open-memory-service.js';
import { ReadOnlyDataDir } from './read-only-data-dir.js';
import { replayDataDir, verifyDataDir } from './rebuild.js';
import { restoreDataDir } from './restore.js';

/**
 * A data dir that Engram encrypted before its pages moved to AEGIS-256 (commit ae21bc3): SQLCipher 4
 * pages in engram.db and vectors.db, a sealed log, sealed flat files, encryption.json saying
 * `databases: sqlcipher-4`. Its key, a test key made for it and nothing else, is the SHA-256 of the text below.
 * It holds two entries in `home` (the locker code, the cat), one in `work` and a purged one.
 */
const FIXTURE = fileURLToPath(new URL('./fixtures/sqlcipher-4-data-dir', import.meta.url));
const key = EncryptionKey.parse('19db2a537f6ec9b90e34ce16c45763c5bbfaca01a55895eac1c03b3d8e35e550');
const next = EncryptionKey.parse(EncryptionKey.generate());
const LOCKER_ID = 'cf9te7yc9p';
const LOCKER = 'my locker code is 4417 at the north gym';
const vectors = new ClusteredVectors({ dimensions: 64, topics: 4, subtopicsPerTopic: 2 });
const embedder: Embedder = { model: 'clustered', embed: async (texts) => texts.map((text) => vectors.vector(text)) };
const logger = silentLogger();

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
  cpSync(FIXTURE, dir.path, { recursive: true });
});
afterEach(() => dir.remove());

const open = (encryptionKey: EncryptionKey, root = dir.path): Promise<MemoryService> =>
  openMemoryService({
    dataDir: root,
    tier1MaxChars: 400,
    logger,
    encryptionKey,
    embeddings: { embedder, queryTimeoutMs: 1_000, minSimilarity: -1 },
  });

const pagesOf = (root: string): string => (JSON.parse(readFileSync(join(root, ENCRYPTION_MARKER_FILE), 'utf8')) as EncryptionMarker).databases;

/** The fixture's memory reads back, through the database, the vectors and the words. */
async function expectFixtureMemory(encryptionKey: EncryptionKey, root = dir.path): Promise<void> {
  const service = await open(encryptionKey, root);
  try {
    expect((await service.get({ pool: 'home', id: LOCKER_ID })).content).toBe(LOCKER);
    expect((await service.search({ pool: 'home', query: 'locker code', limit: 5 }))[0]?.entry.id).toBe(LOCKER_ID);
    expect(await service.vectors!.missing({ pool: 'home', model: embedder.model, limit: 10 })).toEqual([]);
    expect((await service.list({ pool: 'home', limit: 10 })).map((entry) => entry.content).sort()).toEqual([LOCKER, 'the cat is called Pixel']);
  } finally {
    await service.close();
  }
}

describe('a data dir encrypted with SQLCipher 4 pages', () => {
  it('opens, reads and takes writes in its own cipher, and verify, replay, export and backup work on it', async () => {
    await expectFixtureMemory(key);
    const service = await open(key);
    const added = await service.store({ pool: 'work', actor: 'user', content: 'the build server is called kettle', category: 'project' });
    await service.close();
    expect(pagesOf(dir.path)).toBe('sqlcipher-4');
    expect(await verifyDataDir(dir.path, logger, { encryptionKey: key, embeddingsModel: embedder.model })).toMatchObject({
      ok: true,
      memories: 4,
      vectors: { missing: 1 },
    });
    expect(await replayDataDir(dir.path, logger, { encryptionKey: key })).toMatchObject({ memoriesRebuilt: 4 });
    const reader = ReadOnlyDataDir.open(dir.path, key);
    try {
      expect(reader.entries('work').map((entry) => entry.id)).toContain(added.id);
    } finally {
      reader.close();
    }
    const backup = tempDataDir();
    const restored = tempDataDir();
    try {
      await backupDataDir(dir.path, join(backup.path, 'copy'), logger, { encryptionKey: key });
      await restoreDataDir(join(backup.path, 'copy'), restored.path, logger, { encryptionKey: key });
      expect(pagesOf(restored.path)).toBe('sqlcipher-4');
      await expectFixtureMemory(key, restored.path);
    } finally {
      backup.remove();
      restored.remove();
    }
    expect(filesContaining(dir.path, '4417')).toEqual([]);
  });

  it('`engram encrypt` with the same key moves its pages to AEGIS-256, once', async () => {
    expect(await convertDataDir(dir.path, { command: 'encrypt', to: key }, logger)).toMatchObject({ alreadyDone: false, memories: 3 });
    expect(pagesOf(dir.path)).toBe('aegis-256');
    await expectFixtureMemory(key);
    expect(await convertDataDir(dir.path, { command: 'encrypt', to: key }, logger)).toMatchObject({ alreadyDone: true });
    expect(filesContaining(dir.path, '4417')).toEqual([]);
  });

  it('`engram rekey` moves it to the new key and AEGIS-256, `engram decrypt` to plaintext', async () => {
    await convertDataDir(dir.path, { command: 'rekey', from: key, to: next }, logger);
    expect(pagesOf(dir.path)).toBe('aegis-256');
    await expectFixtureMemory(next);

    const other = tempDataDir();
    try {
      cpSync(FIXTURE, other.path, { recursive: true });
      await convertDataDir(other.path, { command: 'decrypt', from: key }, logger);
      expect(filesContaining(other.path, LOCKER)).toContain('engram.db');
      const plain = await openMemoryService({ dataDir: other.path, tier1MaxChars: 400, logger, encryptionKey: null });
      try {
        expect((await plain.get({ pool: 'home', id: LOCKER_ID })).content).toBe(LOCKER);
      } finally {
        await plain.close();
      }
    } finally {
      other.remove();
    }
  });
});
