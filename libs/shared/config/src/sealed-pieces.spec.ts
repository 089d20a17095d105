import { describe, expect, it } from '@jest/globals';
import { AtRestFileError, isSealedFile, openFile } from './at-rest-file.js';
import { EncryptionKey, UnsealError } from './encryption-key.js';
import { PiecesSealer } from './sealed-pieces.js';

const key = EncryptionKey.parse(EncryptionKey.generate());
const PLACE = 'pools/home/MEMORY.md';
const header = Buffer.from('<!-- engram: pool home -->\n');
const block = (text: string): Buffer => Buffer.from(`## ${text}\n`);
const END = Buffer.from('\n');

/** The records of a file written by PiecesSealer (after header and file id), each with its length prefix. */
function records(file: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let offset = 17 + 16; offset < file.length;) {
    const end = offset + 4 + file.readUInt32BE(offset);
    out.push(file.subarray(offset, end));
    offset = end;
  }
  return out;
}

const withRecords = (file: Buffer, parts: readonly Buffer[]): Buffer => Buffer.concat([file.subarray(0, 33), ...parts]);

describe('PiecesSealer', () => {
  it('seals a file in pieces that openFile reads back whole, and a rewrite seals only the pieces added since', () => {
    const sealer = new PiecesSealer(key, PLACE);
    const first = Buffer.concat(sealer.seal([header, block('my locker code is 4711'), END]));
    expect(isSealedFile(first)).toBe(true);
    expect(first.subarray(0, 17).toString()).toBe('engram-sealed-v2\n');
    expect(first.includes('locker')).toBe(false);
    expect(openFile(first, key, PLACE).toString()).toBe(Buffer.concat([header, block('my locker code is 4711'), END]).toString());

    const second = Buffer.concat(sealer.seal([Buffer.from(header), block('my locker code is 4711'), block('the cat is Pixel'), END]));
    expect(second.subarray(0, 33).equals(first.subarray(0, 33))).toBe(true);
    expect(records(second).slice(0, 2)).toEqual(records(first).slice(0, 2));
    expect(openFile(second, key, PLACE).toString()).toContain('the cat is Pixel');
  });

  it('starts a new file id when an earlier piece changes, so no record of the old file fits the new one', () => {
    const sealer = new PiecesSealer(key, PLACE);
    const first = Buffer.concat(sealer.seal([header, block('a'), block('b'), END]));
    const second = Buffer.concat(sealer.seal([header, block('a, edited'), block('b'), END]));
    expect(second.subarray(17, 33).equals(first.subarray(17, 33))).toBe(false);
    expect(openFile(second, key, PLACE).toString()).toContain('a, edited');
    const [h, , b, end] = records(second);
    expect(() => openFile(withRecords(second, [h!, records(first)[1]!, b!, end!]), key, PLACE)).toThrow(UnsealError);
  });

  it('refuses a file cut after a record, records swapped or moved, a mix of two versions, another place, and no key', () => {
    const sealer = new PiecesSealer(key, PLACE);
    const older = Buffer.concat(sealer.seal([header, block('a'), END]));
    const file = Buffer.concat(sealer.seal([header, block('a'), block('b'), END]));
    const [h, a, b, end] = records(file) as [Buffer, Buffer, Buffer, Buffer];
    for (const cut of [[h], [h, a], [h, a, b]]) expect(() => openFile(withRecords(file, cut), key, PLACE)).toThrow(UnsealError);
    expect(() => openFile(withRecords(file, [h, b, a, end]), key, PLACE)).toThrow(UnsealError);
    // The older version's end after the newer body: never written so.
    expect(() => openFile(withRecords(file, [h, a, b, records(older)[2]!]), key, PLACE)).toThrow(UnsealError);
    expect(() => openFile(file.subarray(0, file.length - 1), key, PLACE)).toThrow(UnsealError);
    expect(() => openFile(file, key, 'pools/work/MEMORY.md')).toThrow(UnsealError);
    expect(() => openFile(file, null, PLACE)).toThrow(AtRestFileError);
    expect(openFile(older, key, PLACE).toString()).toBe(Buffer.concat([header, block('a'), END]).toString());
  });
});
