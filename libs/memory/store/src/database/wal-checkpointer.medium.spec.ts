import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3-multiple-ciphers';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EncryptionKey } from '@engram/config';
import { keyPragmas, openDatabase, openReadOnlyDatabase } from './database.js';
import { PAGE_CIPHERS } from './page-cipher.js';
import { Projection } from '../projection/projection.js';
import { storedEvent as stored } from '@engram/testing';
import { tempDataDir } from '@engram/testing';
import { WalCheckpointer } from './wal-checkpointer.js';

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

/** Rows in a copy of the database file alone: what a checkpoint has moved out of the WAL. */
function rowsInDatabaseFile(path: string): number {
  const copy = join(dir.path, 'copy.db');
  copyFileSync(path, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return db.prepare<[], { n: number }>('SELECT count(*) AS n FROM memories').get()?.n ?? 0;
  } finally {
    db.close();
  }
}

describe('WalCheckpointer', () => {
  it('moves busy commits into the database file on its worker while the writer keeps committing', async () => {
    const path = join(dir.path, 'engram.db');
    const db = openDatabase(path);
    const projection = new Projection(db);
    const errors: string[] = [];
    const checkpointer = new WalCheckpointer(db, path, (error) => errors.push(error));
    try {
      for (let seq = 1; seq <= 3200; seq += 32) {
        projection.apply(Array.from({ length: 32 }, (_, i) => stored(seq + i)));
        checkpointer.noteCommit(32);
      }
      // The writer's own checkpoint is far out now: without the worker most rows would still be in the WAL.
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBeGreaterThan(1000);
      await checkpointer.stop();
      expect(rowsInDatabaseFile(path)).toBe(3200);
      expect(errors).toEqual([]);
    } finally {
      projection.close();
    }
  });

  it.each(PAGE_CIPHERS)('keys its connection like the writer: an encrypted database (%s) is checkpointed too', async (cipher) => {
    const key = { key: EncryptionKey.parse(EncryptionKey.generate()), cipher };
    const path = join(dir.path, 'engram.db');
    const db = openDatabase(path, { key });
    const projection = new Projection(db);
    const errors: string[] = [];
    const checkpointer = new WalCheckpointer(db, path, (error) => errors.push(error), keyPragmas(key));
    try {
      for (let seq = 1; seq <= 3200; seq += 32) {
        projection.apply(Array.from({ length: 32 }, (_, i) => stored(seq + i)));
        checkpointer.noteCommit(32);
      }
      await checkpointer.stop();
      expect(errors).toEqual([]);
      const copy = join(dir.path, 'copy.db');
      copyFileSync(path, copy);
      const read = openReadOnlyDatabase(copy, key);
      try {
        expect(read.prepare<[], { n: number }>('SELECT count(*) AS n FROM memories').get()?.n).toBe(3200);
      } finally {
        read.close();
      }
    } finally {
      projection.close();
    }
  });
});
