import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { EVENT_SCHEMA_VERSION, type MemoryEvent } from '@engram/domain';
import { EncryptionKey } from '@engram/config';
import { sealedEventCodec, type StoredEvent } from './event-codec.js';
import { decodeEventLine, encodeEventLine } from './event-line.js';
import { legacyEventLine } from '../testing/legacy-event-line.js';

const event: MemoryEvent = {
  seq: 7,
  type: 'memory.stored',
  id: 'ev1',
  at: '2026-01-01T00:00:00.000Z',
  pool: 'default',
  actor: 'user',
  causationId: null,
  schemaVersion: EVENT_SCHEMA_VERSION,
  data: { id: 'm1', type: 'USER', category: 'preference', content: 'likes "quotes" and ünïcödé § 🎉\nand lines', confidence: 1, source: 'user' },
};

describe('event lines', () => {
  it('round-trips an event as one JSON line with a checksum', () => {
    const line = encodeEventLine(event);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(line)).toMatchObject({ s: 7, crc: expect.stringMatching(/^[0-9a-f]{8}$/) });
    expect(decodeEventLine(line.slice(0, -1))).toEqual({ ok: true, stored: event });
  });

  it('detects a flipped character, a torn line and garbage', () => {
    const line = encodeEventLine(event).slice(0, -1);
    expect(decodeEventLine(line.replace('quotes', 'quotas'))).toEqual({ ok: false, reason: 'checksum mismatch' });
    expect(decodeEventLine(line.slice(0, 40)).ok).toBe(false);
    expect(decodeEventLine('\u0000\u0000\u0000').ok).toBe(false);
    expect(decodeEventLine('').ok).toBe(false);
  });

  it('writes the envelope and the data in short, and reads back exactly the stored event', () => {
    const uuids: MemoryEvent = {
      ...event,
      id: '8a42d24b-f9ce-4040-b1cf-5b2ea439d54f',
      causationId: '7aad09e8-f3fc-48c5-983d-5c72f3d85b96',
      at: '2026-03-04T05:06:07.089Z',
    };
    const line = encodeEventLine(uuids);
    expect(JSON.parse(line)).toMatchObject({ s: 7, t: 'stored', u: 'ikLSS_nOQECxz1supDnVTw', cu: 'eq0J6PP8SMWYPVxy89hblg', a: 1772600767089 });
    expect(line.length).toBeLessThan(legacyEventLine(uuids).length - 100);
    const others: StoredEvent[] = [
      { ...event, id: '8A42D24B-F9CE-4040-B1CF-5B2EA439D54F', causationId: 'req-1', at: '2026-01-01T00:00:00Z' },
      { ...event, type: 'memory.purged', data: { id: 'm1', forbids: ['f1'] } },
      { ...event, data: { ...event.data, extra: { nested: 1 } } as never },
      { ...event, data: 'not an object' as never },
      { ...event, schemaVersion: 2 as never },
      sealedEventCodec(EncryptionKey.parse(EncryptionKey.generate())).toStored(event),
    ];
    const random = Array.from({ length: 200 }, () => ({ ...event, id: randomUUID(), causationId: randomUUID() }));
    for (const stored of [uuids, ...others, ...random]) expect(decodeEventLine(encodeEventLine(stored).slice(0, -1))).toEqual({ ok: true, stored });
  });

  it('reads a line written before lines were short as it always did', () => {
    const sealed = sealedEventCodec(EncryptionKey.parse(EncryptionKey.generate())).toStored(event);
    for (const stored of [event, sealed]) expect(decodeEventLine(legacyEventLine(stored).slice(0, -1))).toEqual({ ok: true, stored });
  });
});
