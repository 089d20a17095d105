import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EncryptionKey } from '@engram/config';
import type { Embedder } from '@engram/embeddings';
import { vectorToBase64 } from '@engram/embeddings';
import { ClusteredVectors, filesContaining, filesUnder, silentLogger, tempDataDir, treeDigest } from '@engram/testing';
import { backupDataDir } from './backup.js';
import { importFlatFiles } from './import-flat.js';
import { ENCRYPTION_MARKER_FILE, EncryptionKeyError } from './data-dir-encryption.js';
import { sealedEventCodec, type StoredEvent } from '../event-log/event-codec.js';
import { decodeEventLine, encodeEventLine } from '../event-log/event-line.js';
import { EventLog } from '../event-log/event-log.js';
import type { MemoryService } from '../writes/memory-service.js';
import { openMemoryService } from './open-memory-service.js';
import { ReadOnlyDataDir } from './read-only-data-dir.js';
import { replayDataDir, verifyDataDir } from './rebuild.js';
import { restoreDataDir } from './restore.js';

const vectors = new ClusteredVectors({ dimensions: 64, topics: 4, subtopicsPerTopic: 2 });
const embedder: Embedder = { model: 'clustered', embed: async (texts) => texts.map((text) => vectors.vector(text)) };
const TOKEN = 'zorblax7quintessence';
const key = EncryptionKey.parse(EncryptionKey.generate());

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

const open = (encryptionKey: EncryptionKey | null, root = dir.path): Promise<MemoryService> =>
  openMemoryService({
    dataDir: root,
    tier1MaxChars: 400,
    logger: silentLogger(),
    encryptionKey,
    embeddings: { embedder, queryTimeoutMs: 1_000, minSimilarity: -1 },
  });

/** Stores the token, gives it a vector as the worker would, searches both ways; returns its id. */
async function storeToken(service: MemoryService): Promise<string> {
  const entry = await service.store({ pool: 'home', actor: 'user', content: `my locker code is ${TOKEN}`, category: 'environment' });
  await service.store({ pool: 'home', actor: 'user', content: 'the cat is called Pixel', category: 'environment' });
  const missing = await service.vectors!.missing({ pool: 'home', model: embedder.model, limit: 100 });
  const made = await embedder.embed(missing.map((text) => text.content));
  await service.vectors!.storeVectors({
    model: embedder.model,
    vectors: missing.map((text, i) => ({ hash: text.hash, vector: vectorToBase64(made[i]!) })),
  });
  expect((await service.search({ pool: 'home', query: 'locker code', limit: 5 })).map((hit) => hit.entry.id)).toContain(entry.id);
  return entry.id;
}

const isDatabaseFile = (path: string): boolean => /\.db(-wal)?$/.test(path);
/** The files that hold the token in the clear. */
const filesWithToken = (root: string): string[] => filesContaining(root, TOKEN).sort();
/** Database files that SQLite (or `strings`) reads without a key: vectors.db holds no text, but vectors say much of it. */
const plaintextDatabaseFiles = (root: string): string[] =>
  [...filesUnder(root)]
    .filter((file) => isDatabaseFile(file.path) && file.bytes.subarray(0, 16).toString('latin1') === 'SQLite format 3\0')
    .map((file) => file.path);

async function expectRefused(attempt: () => Promise<unknown>, message: string): Promise<void> {
  const before = treeDigest(dir.path);
  await expect(attempt()).rejects.toThrow(new EncryptionKeyError(message));
  expect(treeDigest(dir.path)).toBe(before);
}

describe('a data dir with ENGRAM_ENCRYPTION_KEY', () => {
  it('keeps memory out of engram.db, vectors.db and the flat files (the keyless twin has it there), and reads it back with the key', async () => {
    const plain = tempDataDir();
    try {
      const keyless = await open(null, plain.path);
      await storeToken(keyless);
      await keyless.close();
      expect(filesWithToken(plain.path)).toEqual(['engram.db', 'events/0000000000000001.ndjson', 'pools/home/MEMORY.md']);
      expect(plaintextDatabaseFiles(plain.path)).toEqual(['engram.db', 'vectors.db']);
    } finally {
      plain.remove();
    }

    const service = await open(key);
    const id = await storeToken(service);
    await service.close();
    expect(filesWithToken(dir.path)).toEqual([]);
    expect(existsSync(join(dir.path, 'vectors.db'))).toBe(true);
    expect(plaintextDatabaseFiles(dir.path)).toEqual([]);
    const marker = readFileSync(join(dir.path, ENCRYPTION_MARKER_FILE), 'utf8');
    expect(JSON.parse(marker)).toEqual({ format: 1, keyId: key.id, databases: 'aegis-256', events: 'sealed-aes-256-gcm' });

    const again = await open(key);
    try {
      expect((await again.get({ pool: 'home', id })).content).toBe(`my locker code is ${TOKEN}`);
      expect((await again.search({ pool: 'home', query: TOKEN, limit: 5 }))[0]?.entry.id).toBe(id);
    } finally {
      await again.close();
    }
    const reader = ReadOnlyDataDir.open(dir.path, key);
    try {
      expect(reader.entries('home').map((entry) => entry.id)).toContain(id);
    } finally {
      reader.close();
    }
    expect(await replayDataDir(dir.path, silentLogger(), { encryptionKey: key })).toMatchObject({ memoriesRebuilt: 2 });
    expect(await verifyDataDir(dir.path, silentLogger(), { encryptionKey: key })).toMatchObject({ ok: true, memories: 2 });
    expect(filesWithToken(dir.path)).toEqual([]);
  });

  it('recovers a pool from its sealed flat files with the key (RECOVERY.md, "the log is lost")', async () => {
    const service = await open(key);
    const id = await storeToken(service);
    await service.close();
    for (const lost of ['events', 'engram.db', 'engram.db-wal', 'engram.db-shm']) rmSync(join(dir.path, lost), { recursive: true, force: true });
    await expect(importFlatFiles(dir.path, 'home', silentLogger())).rejects.toThrow(
      'pools/home/USER.md is encrypted and no key is set: set ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE)',
    );
    expect(await importFlatFiles(dir.path, 'home', silentLogger(), { encryptionKey: key })).toMatchObject({ stored: 2, skipped: [] });
    const back = await open(key);
    try {
      expect((await back.get({ pool: 'home', id })).content).toBe(`my locker code is ${TOKEN}`);
    } finally {
      await back.close();
    }
    expect(filesWithToken(dir.path)).toEqual([]);
  });

  it('refuses a missing or wrong key in one line, and no file of the data dir changes', async () => {
    await (await open(key)).close();
    const missing = `the data dir ${dir.path} is encrypted and no key is set: set ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) to its key`;
    const wrong = `the data dir ${dir.path} is encrypted with another key than ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) holds`;
    const other = EncryptionKey.parse(EncryptionKey.generate());
    await expectRefused(() => open(null), missing);
    await expectRefused(() => open(other), wrong);
    await expectRefused(async () => ReadOnlyDataDir.open(dir.path, null), missing);
    await expectRefused(() => replayDataDir(dir.path, silentLogger(), { encryptionKey: other }), wrong);
    await expectRefused(() => verifyDataDir(dir.path, silentLogger()), missing);
    await expectRefused(() => backupDataDir(dir.path, join(dir.path, '..', `${TOKEN}-backup`), silentLogger()), missing);
  });

  it('refuses a plaintext data dir that holds memory, naming `engram encrypt`, and changes no file', async () => {
    const service = await open(null);
    await service.store({ pool: 'home', actor: 'user', content: 'plain fact' });
    await service.close();
    await expectRefused(
      () => open(key),
      `the data dir ${dir.path} is not encrypted but ENGRAM_ENCRYPTION_KEY is set: stop the services and run \`npx engram encrypt\` to encrypt it with the key, or unset the key`,
    );
  });

  it('backs up into encrypted database files, and restores only with the key', async () => {
    const service = await open(key);
    const id = await storeToken(service);
    const backup = tempDataDir();
    const target = join(backup.path, 'copy');
    try {
      await backupDataDir(dir.path, target, silentLogger(), { encryptionKey: key });
      await service.close();
      expect(filesWithToken(target)).toEqual([]);
      expect(plaintextDatabaseFiles(target)).toEqual([]);
      const restored = tempDataDir();
      try {
        await expect(restoreDataDir(target, restored.path, silentLogger())).rejects.toThrow(
          new EncryptionKeyError(
            `the backup ${target} is encrypted and no key is set: set ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE) to its key`,
          ),
        );
        await restoreDataDir(target, restored.path, silentLogger(), { encryptionKey: key });
        const back = await open(key, restored.path);
        try {
          expect((await back.get({ pool: 'home', id })).content).toContain(TOKEN);
        } finally {
          await back.close();
        }
      } finally {
        restored.remove();
      }
    } finally {
      backup.remove();
    }
  });

  it('purges through the sealed log: the purged content is gone from the sealed lines too, and the log still verifies', async () => {
    const service = await open(key);
    const id = await storeToken(service);
    await service.purge({ pool: 'home', actor: 'user', id });
    await service.close();
    const log = await EventLog.open({ dir: join(dir.path, 'events'), logger: silentLogger(), codec: sealedEventCodec(key), readOnly: true });
    const texts = log.read(0).flatMap((event) => (event.type === 'memory.stored' ? [event.data.content] : []));
    expect(texts).toEqual(['', 'the cat is called Pixel']);
    expect(await verifyDataDir(dir.path, silentLogger(), { encryptionKey: key })).toMatchObject({ ok: true, memories: 1 });
    expect(await replayDataDir(dir.path, silentLogger(), { encryptionKey: key })).toMatchObject({ memoriesRebuilt: 1 });
  });

  it('verify names a sealed line moved to another place of the log, though its checksum matches', async () => {
    const service = await open(key);
    await storeToken(service);
    await service.close();
    const segment = join(dir.path, 'events', '0000000000000001.ndjson');
    const lines = readFileSync(segment, 'utf8').split('\n');
    const [first, second] = lines.slice(0, 2).map((line) => {
      const decoded = decodeEventLine(line);
      if (!decoded.ok) throw new Error(decoded.reason);
      return decoded.stored as StoredEvent & { sealed: string };
    }) as [StoredEvent & { sealed: string }, StoredEvent & { sealed: string }];
    lines[0] = encodeEventLine({ ...first, sealed: second.sealed }).trimEnd();
    lines[1] = encodeEventLine({ ...second, sealed: first.sealed }).trimEnd();
    writeFileSync(segment, lines.join('\n'));
    const result = await verifyDataDir(dir.path, silentLogger(), { encryptionKey: key });
    expect(result.ok).toBe(false);
    expect(result.problems.join('\n')).toMatch(/event log segment 0000000000000001\.ndjson, line 1: sealed data does not open with this key/);
  });

  it('refuses a data dir encrypted before its event log was sealed, naming `engram encrypt`, and changes no file', async () => {
    const service = await open(key);
    await storeToken(service);
    await service.close();
    const marker = join(dir.path, ENCRYPTION_MARKER_FILE);
    writeFileSync(marker, JSON.stringify({ format: 1, keyId: key.id, databases: 'sqlcipher-4' }));
    await expectRefused(
      () => open(key),
      `the data dir ${dir.path} was encrypted before Engram sealed its event log, which is still clear: stop the services and run \`npx engram encrypt\` with the same key to seal it`,
    );
  });
});
