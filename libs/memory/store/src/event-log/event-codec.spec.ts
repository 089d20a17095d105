import { describe, expect, it } from '@jest/globals';
import { EncryptionKey, UnsealError } from '@engram/config';
import { EVENT_SCHEMA_VERSION, type MemoryEvent } from '@engram/domain';
import { plainEventCodec, sealedEventCodec, type StoredEvent } from './event-codec.js';

const TOKEN = 'quillwort9marmalade';
const event: MemoryEvent = {
  seq: 7,
  type: 'memory.stored',
  id: 'ev1',
  at: '2026-01-01T00:00:00.000Z',
  pool: 'home',
  actor: 'user',
  causationId: null,
  schemaVersion: EVENT_SCHEMA_VERSION,
  data: { id: 'm1', type: 'USER', category: 'preference', content: `likes ${TOKEN} and ünïcödé 🎉`, confidence: 1, source: 'user' },
};
const key = EncryptionKey.parse(EncryptionKey.generate());
const codec = sealedEventCodec(key);

const sealedOf = (stored: StoredEvent): string => ('sealed' in stored ? stored.sealed : '');

describe('the sealed event codec', () => {
  it('keeps the envelope clear and nothing of the data, and opens it back', () => {
    const stored = codec.toStored(event);
    const { data: _data, ...envelope } = event;
    expect(stored).toEqual({ ...envelope, sealed: expect.any(String) });
    // The clear part names none of the data; the sealed bytes hold none of it either (base64 text may
    // spell 'm1' by chance, so the body is checked as the bytes it is).
    const { sealed: _sealed, ...clear } = stored as StoredEvent & { sealed: string };
    expect(JSON.stringify(clear)).not.toMatch(new RegExp(`${TOKEN}|preference|m1`));
    const body = Buffer.from(sealedOf(stored), 'base64');
    for (const text of [TOKEN, 'preference', '"m1"']) expect(body.includes(text)).toBe(false);
    expect(codec.fromStored(JSON.parse(JSON.stringify(stored)) as StoredEvent)).toEqual(event);
  });

  it('seals the same event under a fresh nonce each time', () => {
    expect(sealedOf(codec.toStored(event))).not.toBe(sealedOf(codec.toStored(event)));
  });

  it('does not open a body moved to another seq, id or pool, changed, or under another key', () => {
    const stored = codec.toStored(event);
    for (const moved of [{ seq: 8 }, { id: 'ev2' }, { pool: 'work' }]) {
      expect(() => codec.fromStored({ ...stored, ...moved })).toThrow(UnsealError);
    }
    const body = Buffer.from(sealedOf(stored), 'base64');
    body[20] = (body[20] ?? 0) ^ 1;
    expect(() => codec.fromStored({ ...stored, sealed: body.toString('base64') })).toThrow(UnsealError);
    expect(() => sealedEventCodec(EncryptionKey.parse(EncryptionKey.generate())).fromStored(stored)).toThrow(UnsealError);
  });

  it('refuses a clear body where a sealed one belongs, and the plain codec a sealed one', () => {
    expect(() => codec.fromStored(event)).toThrow(new UnsealError('event 7 is not sealed, in a sealed log'));
    expect(() => plainEventCodec.fromStored(codec.toStored(event))).toThrow('event 7 is sealed and no encryption key is configured');
    expect(plainEventCodec.fromStored(plainEventCodec.toStored(event))).toEqual(event);
  });
});
