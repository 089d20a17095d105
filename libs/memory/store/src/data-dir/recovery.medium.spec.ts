import { spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, readFileSync, readdirSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { openMemoryService } from './open-memory-service.js';
import { replayDataDir } from './rebuild.js';
import { silentLogger, tempDataDir } from '@engram/testing';

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

const open = () => openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger: silentLogger() });

async function fillPool(count: number): Promise<Map<string, string>> {
  const service = await open();
  const contents = new Map<string, string>();
  const entries = await Promise.all(
    Array.from({ length: count }, (_, i) => service.store({ pool: 'p', actor: 'user', content: `fact number ${i}`, category: 'project' })),
  );
  for (const entry of entries) contents.set(entry.id, entry.content);
  await service.archive({ pool: 'p', actor: 'user', id: entries[0]?.id ?? '' });
  await service.close();
  return contents;
}

async function expectAllPresent(contents: Map<string, string>): Promise<void> {
  const service = await open();
  try {
    const active = await service.list({ pool: 'p', limit: 1000 });
    const archived = await service.list({ pool: 'p', archived: true, limit: 1000 });
    const found = new Map([...active, ...archived].map((entry) => [entry.id, entry.content]));
    expect(found).toEqual(contents);
    expect(archived).toHaveLength(1);
    expect(await service.search({ pool: 'p', query: 'number 7' })).not.toHaveLength(0);
  } finally {
    await service.close();
  }
}

describe('recovery on start', () => {
  it('rebuilds a database overwritten with garbage from the log, moving the bad file aside', async () => {
    const contents = await fillPool(40);
    writeFileSync(join(dir.path, 'engram.db'), Buffer.alloc(64 * 1024, 0x5a));
    await expectAllPresent(contents);
    expect(readdirSync(dir.path).some((name) => name.startsWith('engram.db.corrupt-'))).toBe(true);
  });

  it('rebuilds a database truncated to 0 bytes', async () => {
    const contents = await fillPool(40);
    truncateSync(join(dir.path, 'engram.db'), 0);
    await expectAllPresent(contents);
  });

  it('catches up a database that is behind the log', async () => {
    const contents = await fillPool(10);
    const database = join(dir.path, 'engram.db');
    copyFileSync(database, `${database}.older`);
    const service = await open();
    const late = await service.store({ pool: 'p', actor: 'user', content: 'late fact' });
    await service.close();
    contents.set(late.id, late.content);
    // Put back the older database: it lacks the last event, which start-up applies from the log.
    renameSync(`${database}.older`, database);
    await expectAllPresent(contents);
  });

  it('cuts a torn last line left by a crash and keeps every whole event', async () => {
    const contents = await fillPool(5);
    const segment = readdirSync(join(dir.path, 'events'))[0] ?? '';
    appendFileSync(join(dir.path, 'events', segment), '{"seq":7,"type":"memory.stored","id":"x","at":"2026');
    await expectAllPresent(contents);
  });
});

const writeLoad = fileURLToPath(new URL('../../dist/testing/write-load.js', import.meta.url));

describe('crash safety', () => {
  it('loses no acknowledged write when killed with SIGKILL amid hundreds of concurrent writes', async () => {
    const child = spawn(process.execPath, [writeLoad, dir.path, '64'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const acked = new Map<string, string>();
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const lines = createInterface({ input: child.stdout });
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`write-load exited early with ${code}`)));
      lines.on('line', (line) => {
        const [kind, id, ...content] = line.split(' ');
        if (kind === 'ack' && id) acked.set(id, content.join(' '));
        if (acked.size >= 600) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    await exited;
    lines.close();

    // An ack came after the rename of the pool's flat file: it already lists every acknowledged write.
    const flat = readFileSync(join(dir.path, 'pools', 'crash', 'MEMORY.md'), 'utf8');
    expect([...acked.keys()].filter((id) => !flat.includes(`[id:${id}]`))).toEqual([]);

    const service = await open();
    try {
      expect(acked.size).toBeGreaterThanOrEqual(600);
      expect((await service.stats({})).lastSeq).toBeGreaterThanOrEqual(acked.size);
      const lost: string[] = [];
      for (const [id, content] of acked) {
        const entry = await service.get({ pool: 'crash', id }).catch(() => undefined);
        if (entry?.content !== content) lost.push(id);
      }
      expect(lost).toEqual([]);
    } finally {
      await service.close();
    }
  });
});

describe('engram replay', () => {
  it('swaps in the rebuilt database and leaves no temp file, WAL or shared-memory file of it behind', async () => {
    const contents = await fillPool(20);
    const result = await replayDataDir(dir.path, silentLogger());
    expect(result).toMatchObject({ memoriesRebuilt: 20 });
    expect(readdirSync(dir.path).filter((name) => name.includes('replay-tmp'))).toEqual([]);
    await expectAllPresent(contents);
  });
});
