import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { MemoryEntry } from '@engram/domain';
import { memoryEntry, smallDisk, type SmallDisk } from '@engram/testing';
import { DataDir } from '../data-dir/data-dir.js';
import { FlatFiles } from './flat-files.js';

let disk: SmallDisk;
beforeEach(() => {
  disk = smallDisk();
});
afterEach(() => {
  disk.remove();
});

describe('flat files on a full disk', () => {
  it('leaves no half-written temp file when a render finds no room, and renders the change once there is', async () => {
    const entries: MemoryEntry[] = [memoryEntry('first1', { pool: 'p', type: 'USER', content: 'written before the disk filled' })];
    const files = new FlatFiles(new DataDir(disk.path), () => entries);
    await files.refresh('p');
    const path = join(disk.path, 'pools', 'p', 'USER.md');

    disk.fill();
    const added = memoryEntry('second2', { pool: 'p', type: 'USER', content: 'x'.repeat(1500), createdAt: '2099-01-01T00:00:00.000Z' });
    entries.push(added);
    files.noteChanges([{ before: undefined, after: added }]);
    await expect(files.refresh('p')).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(readdirSync(join(disk.path, 'pools', 'p')).sort()).toEqual(['MEMORY.md', 'USER.md']);
    expect(readFileSync(path, 'utf8')).not.toContain('[id:second2]');

    disk.free();
    await files.refresh('p');
    expect(readFileSync(path, 'utf8')).toContain('[id:first1]');
    expect(readFileSync(path, 'utf8')).toContain(`[id:second2] (uncategorized) ${'x'.repeat(1500)}`);
  });
});
