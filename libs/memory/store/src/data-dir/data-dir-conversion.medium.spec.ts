import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EncryptionKey } from '@engram/config';
import { ensureInternalToken, readInternalToken } from '@engram/contracts';
import type { Embedder } from '@engram/embeddings';
import { vectorToBase64 } from '@engram/embeddings';
import { ClusteredVectors, filesContaining, silentLogger, tempDataDir } from '@engram/testing';
import { convertDataDir } from './data-dir-conversion.js';
import { EncryptionKeyError } from './data-dir-encryption.js';
import { ExtractionSpool } from '../writes/extraction-spool.js';
import type { MemoryService } from '../writes/memory-service.js';
import { openMemoryService } from './open-memory-service.js';
import { verifyDataDir } from './rebuild.js';

const vectors = new ClusteredVectors({ dimensions: 64, topics: 4, subtopicsPerTopic: 2 });
const embedder: Embedder = { model: 'clustered', embed: async (texts) => texts.map((text) => vectors.vector(text)) };
const TOKEN = 'brontosaurus5filigree';
const key = EncryptionKey.parse(EncryptionKey.generate());
const next = EncryptionKey.parse(EncryptionKey.generate());
const logger = silentLogger();

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

const open = (encryptionKey: EncryptionKey | null): Promise<MemoryService> =>
  openMemoryService({
    dataDir: dir.path,
    tier1MaxChars: 400,
    logger,
    encryptionKey,
    embeddings: { embedder, queryTimeoutMs: 1_000, minSimilarity: -1 },
  });

/** A plaintext data dir with the token in every kind of file: database, vectors, flat files, spool, plus the internal token. */
async function plaintextDataDir(): Promise<{ id: string; internalToken: string }> {
  const service = await open(null);
  const entry = await service.store({ pool: 'home', actor: 'user', content: `the wifi password is ${TOKEN}`, category: 'environment' });
  await service.store({ pool: 'work', actor: 'user', content: 'standup is at nine', category: 'project' });
  for (const pool of ['home', 'work']) {
    const missing = await service.vectors!.missing({ pool, model: embedder.model, limit: 100 });
    const made = await embedder.embed(missing.map((text) => text.content));
    await service.vectors!.storeVectors({
      model: embedder.model,
      vectors: missing.map((text, i) => ({ hash: text.hash, vector: vectorToBase64(made[i]!) })),
    });
  }
  await service.close();
  new ExtractionSpool(join(dir.path, 'spool', 'extract')).put({
    pool: 'home',
    requestId: 'r1',
    suggestions: [`wifi password ${TOKEN}`],
    exchange: { user: `remember ${TOKEN}`, assistant: 'ok' },
  });
  return { id: entry.id, internalToken: ensureInternalToken(undefined, dir.path) };
}

const clearFiles = (): string[] => filesContaining(dir.path, TOKEN).sort();

describe('engram encrypt / decrypt / rekey', () => {
  it('encrypts every file that holds memory, verified, and leaves no copy behind; decrypt turns it back', async () => {
    const { id, internalToken } = await plaintextDataDir();
    expect(clearFiles()).toEqual(['engram.db', 'events/0000000000000001.ndjson', 'pools/home/MEMORY.md', expect.stringMatching(/^spool\/extract\//)]);

    expect(await convertDataDir(dir.path, { command: 'encrypt', to: key }, logger)).toMatchObject({ memories: 2, resumed: false, untouched: [] });
    expect(clearFiles()).toEqual([]);
    expect(readdirSync(dir.path).filter((name) => name.startsWith('convert'))).toEqual([]);
    expect(readInternalToken(dir.path, key)).toBe(internalToken);
    expect(new ExtractionSpool(join(dir.path, 'spool', 'extract'), undefined, key).list()[0]?.exchange.user).toBe(`remember ${TOKEN}`);
    expect(await verifyDataDir(dir.path, logger, { encryptionKey: key, embeddingsModel: embedder.model })).toMatchObject({
      ok: true,
      vectors: { missing: 0 },
    });
    const service = await open(key);
    try {
      expect((await service.get({ pool: 'home', id })).content).toContain(TOKEN);
      expect((await service.search({ pool: 'home', query: 'wifi password', limit: 3 }))[0]?.entry.id).toBe(id);
    } finally {
      await service.close();
    }

    // Run again (say after a kill -9 just as it ended): nothing to do; another key is refused.
    expect(await convertDataDir(dir.path, { command: 'encrypt', to: key }, logger)).toMatchObject({ alreadyDone: true, memories: 2 });
    await expect(convertDataDir(dir.path, { command: 'encrypt', to: next }, logger)).rejects.toThrow(EncryptionKeyError);
    await expect(convertDataDir(dir.path, { command: 'decrypt', from: next }, logger)).rejects.toThrow('encrypted with another key');

    await convertDataDir(dir.path, { command: 'decrypt', from: key }, logger);
    expect(existsSync(join(dir.path, 'encryption.json'))).toBe(false);
    expect(clearFiles()).toEqual(['engram.db', 'events/0000000000000001.ndjson', 'pools/home/MEMORY.md', expect.stringMatching(/^spool\/extract\//)]);
    expect(readInternalToken(dir.path)).toBe(internalToken);
    expect(await verifyDataDir(dir.path, logger)).toMatchObject({ ok: true, memories: 2 });
  });

  it('refuses a data dir that fails verify, and leaves it as it was: no journal, the service still starts', async () => {
    const { id } = await plaintextDataDir();
    rmSync(join(dir.path, 'engram.db'));
    await expect(convertDataDir(dir.path, { command: 'encrypt', to: key }, logger)).rejects.toThrow(/fails verify, nothing was changed: no database/);
    expect(readdirSync(dir.path).filter((name) => name.startsWith('convert'))).toEqual([]);
    const service = await open(null);
    try {
      expect((await service.get({ pool: 'home', id })).content).toContain(TOKEN);
    } finally {
      await service.close();
    }
    expect((await convertDataDir(dir.path, { command: 'encrypt', to: key }, logger)).memories).toBe(2);
  });

  it('rekeys: the new key opens everything, the old one is refused', async () => {
    const { id } = await plaintextDataDir();
    await convertDataDir(dir.path, { command: 'encrypt', to: key }, logger);
    await convertDataDir(dir.path, { command: 'rekey', from: key, to: next }, logger);
    await expect(open(key)).rejects.toThrow(EncryptionKeyError);
    const service = await open(next);
    try {
      expect((await service.get({ pool: 'home', id })).content).toContain(TOKEN);
    } finally {
      await service.close();
    }
    expect(clearFiles()).toEqual([]);
    expect(await verifyDataDir(dir.path, logger, { encryptionKey: next })).toMatchObject({ ok: true, memories: 2 });
  });

  it('encrypt seals the log of a data dir encrypted with the same key before the log was sealed', async () => {
    const { id } = await plaintextDataDir();
    // As the encryption of before: the databases and sealed files encrypted, the log copied clear, no `events` in the marker
    // (its pages are in the current cipher here: sqlcipher-data-dir.medium.spec.ts has a data dir with the old one).
    await convertDataDir(dir.path, { command: 'encrypt', to: key }, logger);
    await convertDataDir(dir.path, { command: 'decrypt', from: key }, logger);
    const clearLog = readFileSync(join(dir.path, 'events', '0000000000000001.ndjson'));
    await convertDataDir(dir.path, { command: 'encrypt', to: key }, logger);
    writeFileSync(join(dir.path, 'events', '0000000000000001.ndjson'), clearLog);
    writeFileSync(join(dir.path, 'encryption.json'), JSON.stringify({ format: 1, keyId: key.id, databases: 'aegis-256' }));
    expect(clearFiles()).toEqual(['events/0000000000000001.ndjson']);
    await expect(open(key)).rejects.toThrow(/was encrypted before Engram sealed its event log/);

    expect(await convertDataDir(dir.path, { command: 'encrypt', to: key }, logger)).toMatchObject({ memories: 2, alreadyDone: false });
    expect(clearFiles()).toEqual([]);
    const service = await open(key);
    try {
      expect((await service.get({ pool: 'home', id })).content).toContain(TOKEN);
    } finally {
      await service.close();
    }
    expect(await convertDataDir(dir.path, { command: 'encrypt', to: key }, logger)).toMatchObject({ alreadyDone: true });
  });
});
