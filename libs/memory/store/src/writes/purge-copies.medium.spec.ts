import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3-multiple-ciphers';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { openMemoryService } from '../data-dir/open-memory-service.js';
import { silentLogger, tempDataDir } from '@engram/testing';

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

const open = () => openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger: silentLogger() });
const team = { actor: 'user' as const, pool: 'team' };

function filesHolding(root: string, text: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => join(root, name))
    .filter((path) => statSync(path).isFile() && readFileSync(path).includes(text));
}

describe('purge reaches every copy in the data dir', () => {
  it('deletes a database moved aside at start, which still held the purged text', async () => {
    let service = await open();
    const secret = await service.store({ ...team, content: 'the alarm code is 8142-secret' });
    await service.store({ ...team, content: 'likes green tea' });
    await service.close();
    // A database that fails its checks at start is moved aside whole, purged-to-be text and all.
    const db = new Database(join(dir.path, 'engram.db'));
    db.exec("UPDATE meta SET value = 99 WHERE key = 'schema_version'");
    db.close();
    service = await open();
    try {
      expect(readdirSync(dir.path).some((name) => name.startsWith('engram.db.corrupt-'))).toBe(true);
      expect(filesHolding(dir.path, '8142-secret')).not.toEqual([]);
      await service.purge({ ...team, id: secret.id });
      expect(filesHolding(dir.path, '8142-secret')).toEqual([]);
      expect(readdirSync(dir.path).filter((name) => name.startsWith('engram.db.corrupt-'))).toEqual([]);
      expect((await service.list({ pool: 'team' })).map((entry) => entry.content)).toEqual(['likes green tea']);
    } finally {
      await service.close();
    }
  });
});
