import { describe, expect, it } from '@jest/globals';
import { AtRestFileError, isSealedFile, openFile, sealFile } from './at-rest-file.js';
import { EncryptionKey, UnsealError } from './encryption-key.js';

const key = EncryptionKey.parse(EncryptionKey.generate());
const other = EncryptionKey.parse(EncryptionKey.generate());
const text = Buffer.from('my locker code is 4711');

describe('EncryptionKey.seal / open (AES-256-GCM)', () => {
  it('opens what it sealed, and never seals the same text to the same bytes (fresh nonce)', () => {
    const first = key.seal(text, 'pools/home/MEMORY.md');
    const second = key.seal(text, 'pools/home/MEMORY.md');
    expect(first.equals(second)).toBe(false);
    expect(first.includes(text)).toBe(false);
    expect(key.open(first, 'pools/home/MEMORY.md').toString()).toBe(text.toString());
    expect(key.open(second, 'pools/home/MEMORY.md').toString()).toBe(text.toString());
  });

  it('refuses another key, a changed byte and other associated data (bytes moved to another place)', () => {
    const sealed = key.seal(text, 'event 7 home');
    expect(() => other.open(sealed, 'event 7 home')).toThrow(UnsealError);
    expect(() => key.open(sealed, 'event 8 home')).toThrow(UnsealError);
    for (const at of [0, 12, sealed.length - 1]) {
      const changed = Buffer.from(sealed);
      changed[at] = (changed[at] ?? 0) ^ 1;
      expect(() => key.open(changed, 'event 7 home')).toThrow(UnsealError);
    }
    expect(() => key.open(sealed.subarray(0, 20), 'event 7 home')).toThrow(UnsealError);
  });
});

describe('sealFile / openFile', () => {
  it('writes the content itself without a key, and a marked, sealed file with one', () => {
    expect(sealFile(text, null, 'internal-token').equals(text)).toBe(true);
    const sealed = sealFile(text, key, 'internal-token');
    expect(sealed.subarray(0, 17).toString()).toBe('engram-sealed-v1\n');
    expect(isSealedFile(sealed)).toBe(true);
    expect(openFile(sealed, key, 'internal-token').equals(text)).toBe(true);
    expect(openFile(text, null, 'internal-token').equals(text)).toBe(true);
  });

  it('names the mismatch: a sealed file without a key, a plain one with a key, a file moved to another place', () => {
    const sealed = sealFile(text, key, 'pools/home/USER.md');
    expect(() => openFile(sealed, null, 'pools/home/USER.md')).toThrow(
      new AtRestFileError('pools/home/USER.md is encrypted and no key is set: set ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE)'),
    );
    expect(() => openFile(text, key, 'pools/home/USER.md')).toThrow(
      new AtRestFileError('pools/home/USER.md is not encrypted but ENGRAM_ENCRYPTION_KEY is set'),
    );
    expect(() => openFile(sealed, key, 'pools/work/USER.md')).toThrow(UnsealError);
  });
});
