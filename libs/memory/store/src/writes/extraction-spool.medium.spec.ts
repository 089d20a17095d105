import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ExtractionSpool } from './extraction-spool.js';
import { EncryptionKey } from '@engram/config';
import { because, filesContaining, smallDisk, tempDataDir } from '@engram/testing';
import { exchangeIdOf } from '@engram/jobs';

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

const exchange = (requestId: string, user = 'where is the build server?') => {
  const sent = { pool: 'ops', suggestions: ['The build server is in Oslo'], exchange: { user, assistant: 'Noted.' }, requestId };
  return { ...sent, exchangeId: exchangeIdOf(sent) };
};

describe('ExtractionSpool', () => {
  it('keeps exchanges on disk across instances until removed, one per exchange', () => {
    const path = join(dir.path, 'spool');
    const spool = new ExtractionSpool(path);
    spool.put(exchange('r1'));
    spool.put(exchange('r1'));
    spool.put(exchange('r2'));
    const reopened = new ExtractionSpool(path);
    expect(
      reopened
        .list()
        .map((item) => item.requestId)
        .sort(),
    ).toEqual(['r1', 'r2']);
    reopened.remove(exchange('r1').exchangeId);
    expect(new ExtractionSpool(path).list()).toEqual([exchange('r2')]);
    expect(readdirSync(path).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('with an at-rest key seals each file: the text is in no byte, only that key lists it, and a keyless reader deletes nothing', () => {
    const path = join(dir.path, 'spool');
    const key = EncryptionKey.parse(EncryptionKey.generate());
    new ExtractionSpool(path, undefined, key).put(exchange('r1', 'the vault combination is 31-7-12'));
    expect(filesContaining(path, '31-7-12')).toEqual([]);
    expect(filesContaining(path, 'build server')).toEqual([]);
    expect(new ExtractionSpool(path, undefined, key).list()).toEqual([exchange('r1', 'the vault combination is 31-7-12')]);
    expect(new ExtractionSpool(path).list()).toEqual([]);
    expect(new ExtractionSpool(path, undefined, EncryptionKey.parse(EncryptionKey.generate())).list()).toEqual([]);
    expect(new ExtractionSpool(path, undefined, key).size).toBe(1);
  });

  it('keeps two exchanges a client sent under one request id apart', () => {
    const spool = new ExtractionSpool(join(dir.path, 'spool'));
    spool.put(exchange('same', 'where is the build server?'));
    spool.put(exchange('same', 'which database is read-only?'));
    expect(spool.size).toBe(2);
  });

  it('names an exchange a gateway without exchange ids sent, and takes out a file kept before them', () => {
    const path = join(dir.path, 'spool');
    const spool = new ExtractionSpool(path);
    const { exchangeId, ...unnamed } = exchange('r1');
    spool.put(unnamed);
    expect(spool.list()).toEqual([{ ...unnamed, exchangeId }]);
    spool.remove(exchangeId);
    // A file of the old spool: named by the hash of its request id, without an exchange id inside.
    writeFileSync(
      join(path, `${createHash('sha256').update('old').digest('hex').slice(0, 32)}.json`),
      JSON.stringify({ ...unnamed, requestId: 'old' }),
    );
    const [old] = spool.list();
    expect(old).toMatchObject({ requestId: 'old', exchangeId: 'old' });
    spool.remove(old!.exchangeId);
    expect(spool.size).toBe(0);
  });

  it('is bounded: refuses past its item limit and keeps only the start of a long exchange', () => {
    const spool = new ExtractionSpool(join(dir.path, 'spool'), { maxItems: 2, maxExchangeChars: 10 });
    spool.put(exchange('r1', 'x'.repeat(100_000)));
    spool.put(exchange('r2'));
    expect(() => spool.put(exchange('r3'))).toThrow(expect.objectContaining({ name: 'MemoryError', code: 'unavailable' }));
    const [file] = readdirSync(join(dir.path, 'spool')).filter((name) => readFileSync(join(dir.path, 'spool', name), 'utf8').includes('"r1"'));
    expect(JSON.parse(readFileSync(join(dir.path, 'spool', file!), 'utf8'))).toMatchObject({ exchange: { user: 'x'.repeat(10) } });
  });

  it('refuses what is not an exchange, and a pool name that is a path', () => {
    const spool = new ExtractionSpool(join(dir.path, 'spool'));
    for (const bad of [
      null,
      { ...exchange('r1'), pool: '../etc' },
      { ...exchange('r1'), suggestions: 'x' },
      { ...exchange('r1'), exchange: {} },
      { ...exchange(''), requestId: '' },
    ]) {
      expect(() => spool.put(bad)).toThrow(expect.objectContaining({ name: 'MemoryError', code: 'invalid_request' }));
    }
    expect(spool.size).toBe(0);
  });

  it('on a full disk refuses an exchange as unavailable and leaves no part of it behind, then takes it once there is room', () => {
    const disk = smallDisk();
    try {
      const path = join(disk.path, 'spool');
      const spool = new ExtractionSpool(path);
      spool.put(exchange('before'));
      disk.fill();
      // A long exchange: its file cannot fit in what a full file system still has of a page.
      const long = exchange('during', 'where is the build server? '.repeat(600));
      expect(() => spool.put(long)).toThrow(
        expect.objectContaining({ name: 'MemoryError', code: 'unavailable', message: expect.stringMatching(/data disk is full.*not kept/) }),
      );
      because('no half-written file holds the text', () =>
        expect(readdirSync(path).sort()).toEqual(
          readdirSync(path)
            .filter((name) => name.endsWith('.json'))
            .sort(),
        ),
      );
      expect(spool.list().map((item) => item.requestId)).toEqual(['before']);

      disk.free();
      spool.put(long);
      expect(
        spool
          .list()
          .map((item) => item.requestId)
          .sort(),
      ).toEqual(['before', 'during']);
      expect(spool.list().find((item) => item.requestId === 'during')?.exchange.user).toBe(long.exchange.user.slice(0, 16_000));
    } finally {
      disk.remove();
    }
  });
});
