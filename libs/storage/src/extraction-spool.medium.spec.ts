import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ExtractionSpool } from './extraction-spool.js';
import { tempDataDir } from '@engram/testing';

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

const exchange = (requestId: string, user = 'where is the build server?') => ({
  pool: 'ops',
  suggestions: ['The build server is in Oslo'],
  exchange: { user, assistant: 'Noted.' },
  requestId,
});

describe('ExtractionSpool', () => {
  it('keeps exchanges on disk across instances until removed, one per request id', () => {
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
    reopened.remove('r1');
    expect(new ExtractionSpool(path).list()).toEqual([exchange('r2')]);
    expect(readdirSync(path).filter((name) => name.endsWith('.tmp'))).toEqual([]);
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
});
