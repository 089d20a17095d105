import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryError } from '@engram/contracts';
import { vectorToBase64, type Embedder } from '@engram/embeddings';
import { because, ClusteredVectors, eventually, recordingLogger, silentLogger, smallDisk, type SmallDisk } from '@engram/testing';
import type { MemoryService } from '../writes/memory-service.js';
import { openMemoryService } from './open-memory-service.js';
import { verifyDataDir } from './rebuild.js';
import { openReadOnlyDatabase } from '../database/database.js';

const person = { actor: 'user' as const, pool: 'full' };
/** The longest content: its log line cannot fit in what is left of a page the log already has. */
const long = (label: string): string => `${label} ${'all work and no play makes jack a dull boy '.repeat(46)}`.slice(0, 2000).trimEnd();

let disk: SmallDisk;
let service: MemoryService;
const open = () => openMemoryService({ dataDir: disk.path, tier1MaxChars: 400, logger: silentLogger(), diskFullRetryMs: 50 });

beforeEach(async () => {
  disk = smallDisk();
  service = await open();
});
afterEach(async () => {
  await service.close();
  disk.remove();
});

/** A write's answer: the entry, or the refusal as the caller gets it. */
async function attempt(write: () => Promise<{ id: string }>): Promise<{ id: string } | MemoryError> {
  return write().catch((error: unknown) => {
    if (error instanceof MemoryError) return error;
    throw error;
  });
}

describe('a full data disk', () => {
  it('answers a write it cannot finish as unavailable, stops taking writes but serves reads, and takes them again once space is freed', async () => {
    const acknowledged = [];
    for (const label of ['one', 'two', 'three']) acknowledged.push(await service.store({ ...person, content: long(label), idempotencyKey: label }));

    disk.fill();
    const during = { ...person, content: long('during'), idempotencyKey: 'during', idempotencyKeyBindsRequest: true };
    // Whichever step runs out of room first (the log, the database, the flat files), the answer is a 503's code.
    let request = during;
    let failed = await attempt(() => service.store(request));
    for (let tries = 0; !(failed instanceof MemoryError) && tries < 20; tries++) {
      acknowledged.push(failed);
      request = { ...during, content: long(`during ${tries}`), idempotencyKey: `during-${tries}` };
      failed = await attempt(() => service.store(request));
    }
    expect(failed).toBeInstanceOf(MemoryError);
    expect(failed).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/^the data disk is full \(.*(ENOSPC|SQLITE_FULL|full)/i) });

    expect((await service.ping({})).diskFull).toMatchObject({ since: expect.any(String), error: expect.any(String) });
    await expect(service.store({ ...person, content: 'refused while full' })).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('nothing was stored'),
    });
    await expect(service.delete({ ...person, id: acknowledged[0]!.id })).rejects.toMatchObject({ code: 'unavailable' });
    // Reads go on.
    expect((await service.get({ pool: 'full', id: acknowledged[0]!.id })).content).toBe(long('one'));
    expect((await service.search({ pool: 'full', query: 'jack' })).length).toBeGreaterThanOrEqual(acknowledged.length);

    disk.free();
    await eventually(async () => expect((await service.ping({})).diskFull).toBeNull(), { timeout: 15_000 });
    const retried = await service.store(request);
    const after = await service.store({ ...person, content: 'stored once space is back', type: 'USER', category: 'preference' });

    // Every acknowledged write is there once, the retried one once, and the files and the log agree with the database.
    const contents = (await service.list({ pool: 'full', limit: 100 })).map((entry) => entry.content).sort();
    const expected = [...acknowledged.map((entry) => (entry as { content: string }).content), retried.content, after.content].sort();
    expect(contents).toEqual([...new Set(expected)].sort());
    const files =
      readFileSync(join(disk.path, 'pools', 'full', 'MEMORY.md'), 'utf8') + readFileSync(join(disk.path, 'pools', 'full', 'USER.md'), 'utf8');
    for (const entry of [...acknowledged, retried, after]) expect(files).toContain(`[id:${entry.id}]`);

    await service.close();
    expect((await verifyDataDir(disk.path, silentLogger())).ok).toBe(true);
    service = await open();
    expect((await service.list({ pool: 'full', limit: 100 })).map((entry) => entry.content).sort()).toEqual(contents);
  });

  it('says truly whether a write it could not finish was stored: once space is back, what it called stored is there and what it called not stored is not', async () => {
    await service.store({ ...person, content: 'before the disk filled', type: 'USER', category: 'preference' });
    disk.fill();
    // Short writes: their log line may still fit in the log's last page, so the database or the flat files run out of room first.
    const answers: { content: string; answer: { id: string } | MemoryError }[] = [];
    for (let index = 0; index < 6; index++) {
      const content = `short write ${index}`;
      answers.push({ content, answer: await attempt(() => service.store({ ...person, content, idempotencyKey: `short-${index}` })) });
      if (answers.at(-1)!.answer instanceof MemoryError) break;
    }
    const refused = answers.at(-1)!.answer;
    expect(refused).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/^the data disk is full/) });
    disk.free();
    await eventually(async () => expect((await service.ping({})).diskFull).toBeNull(), { timeout: 15_000 });

    const stored = new Set((await service.list({ pool: 'full', limit: 100 })).map((entry) => entry.content));
    for (const { content, answer } of answers) {
      const message = answer instanceof MemoryError ? answer.message : 'acknowledged';
      if (message === 'acknowledged' || message.includes('it was stored')) because(`${content}: ${message}`, () => expect(stored).toContain(content));
      else if (message.includes('nothing was stored')) because(`${content}: ${message}`, () => expect(stored).not.toContain(content));
    }
    // A retry of the refused write stores it once, whatever its answer said.
    const last = answers.at(-1)!;
    const index = answers.length - 1;
    const retried = await service.store({ ...person, content: last.content, idempotencyKey: `short-${index}` });
    expect(retried.content).toBe(last.content);
    expect((await service.list({ pool: 'full', limit: 100 })).filter((entry) => entry.content === last.content)).toHaveLength(1);
    const files = readFileSync(join(disk.path, 'pools', 'full', 'MEMORY.md'), 'utf8');
    expect(files).toContain(`[id:${retried.id}] (uncategorized) ${last.content}`);
  });

  it('starts read-only on a disk that filled up after a clean shutdown (no WAL index to map), serves reads, and takes writes once space is freed', async () => {
    const before = await service.store({ ...person, content: 'stored before the clean shutdown', type: 'USER', category: 'preference' });
    // A clean shutdown checkpoints the WAL and removes it and its index: a start must create them again.
    await service.close();
    disk.fill();

    service = await open();
    expect((await service.ping({})).diskFull).toMatchObject({ since: expect.any(String), error: expect.any(String) });
    expect((await service.get({ pool: 'full', id: before.id })).content).toBe('stored before the clean shutdown');
    await expect(service.store({ ...person, content: 'refused while full' })).rejects.toMatchObject({ code: 'unavailable' });
    because('a full disk is not a corrupt database', () => expect(readdirSync(disk.path).filter((name) => name.includes('corrupt'))).toEqual([]));

    disk.free();
    await eventually(async () => expect((await service.ping({})).diskFull).toBeNull(), { timeout: 15_000 });
    const after = await service.store({ ...person, content: 'stored once space is back', type: 'USER', category: 'preference' });
    // Other connections read the database again beside the service (engram backup, the WAL checkpointer's thread).
    const reader = openReadOnlyDatabase(join(disk.path, 'engram.db'), null);
    try {
      expect(reader.prepare('SELECT content FROM memories ORDER BY content').pluck().all()).toEqual([before.content, after.content]);
    } finally {
      reader.close();
    }
    await service.close();
    expect((await verifyDataDir(disk.path, silentLogger())).ok).toBe(true);
    service = await open();
    expect((await service.list({ pool: 'full', limit: 10 })).map((entry) => entry.content).sort()).toEqual([after.content, before.content].sort());
  });

  it('does not log an error for each search while the disk is full: what searches return is not recorded until there is room', async () => {
    await service.close();
    const { logger, lines } = recordingLogger();
    const openRecorded = () => openMemoryService({ dataDir: disk.path, tier1MaxChars: 400, logger, diskFullRetryMs: 50 });
    service = await openRecorded();
    const entry = await service.store({ ...person, content: 'the staging cluster runs on arm64', type: 'USER', category: 'preference' });
    disk.fill();
    await expect(service.store({ ...person, content: long('refused') })).rejects.toMatchObject({ code: 'unavailable' });
    expect((await service.ping({})).diskFull).not.toBeNull();
    const errorsBefore = lines.filter((line) => line.level >= 50).length;

    const search = async () => (await service.search({ pool: 'full', query: 'staging cluster', recordReference: true })).map((hit) => hit.entry.id);
    for (let round = 0; round < 3; round++) {
      expect(await search()).toEqual([entry.id]);
      // Past the window in which references are collected before they are written.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
    }
    because('the full disk was logged once, when it was found; searches add no error per batch of references', () =>
      expect(
        lines
          .filter((line) => line.level >= 50)
          .slice(errorsBefore)
          .map((line) => line.msg),
      ).toEqual([]),
    );

    disk.free();
    await eventually(async () => expect((await service.ping({})).diskFull).toBeNull(), { timeout: 15_000 });
    expect(await search()).toEqual([entry.id]);
    await service.close();
    service = await openRecorded();
    expect(await service.get({ pool: 'full', id: entry.id })).toMatchObject({ referenceCount: 1 });
  });

  it("refuses the worker's vectors as unavailable while the disk is full, and takes them once there is room", async () => {
    await service.close();
    const clustered = new ClusteredVectors({ dimensions: 1_536, topics: 10, subtopicsPerTopic: 4 });
    const embedder: Embedder = { model: 'clustered', embed: async (texts) => texts.map((text) => clustered.vector(text)) };
    service = await openMemoryService({
      dataDir: disk.path,
      tier1MaxChars: 400,
      logger: silentLogger(),
      diskFullRetryMs: 50,
      embeddings: { embedder, queryTimeoutMs: 1_000, minSimilarity: 0.3 },
    });
    for (let index = 0; index < 12; index++) await service.store({ ...person, content: `fact ${index}` });
    const vectorsOfMissing = async () => {
      const missing = await service.vectors!.missing({ pool: 'full', model: 'clustered', limit: 100 });
      const made = await embedder.embed(missing.map((text) => text.content));
      return { model: 'clustered', vectors: missing.map((text, index) => ({ hash: text.hash, vector: vectorToBase64(made[index]!) })) };
    };
    const request = await vectorsOfMissing();
    expect(request.vectors).toHaveLength(12);

    disk.fill();
    // 12 vectors of 6 KiB each: more than a full file system has left in its last pages.
    await expect(service.vectors!.storeVectors(request)).rejects.toMatchObject({
      name: 'MemoryError',
      code: 'unavailable',
      message: expect.stringMatching(/^the data disk is full .*the vectors were not stored/),
    });
    expect((await service.ping({})).diskFull).not.toBeNull();
    // While writes are refused, vectors are refused too (a small batch would still fit, and find the index stale).
    await expect(service.vectors!.storeVectors({ ...request, vectors: request.vectors.slice(0, 1) })).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('the data disk is full'),
    });

    disk.free();
    await eventually(async () => expect((await service.ping({})).diskFull).toBeNull(), { timeout: 15_000 });
    expect(await service.vectors!.storeVectors(await vectorsOfMissing())).toEqual({ stored: 12 });
    expect((await service.vectors!.missing({ pool: 'full', model: 'clustered', limit: 100 })).length).toBe(0);
  });
});
