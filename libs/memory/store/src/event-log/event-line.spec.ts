import { describe, expect, it } from '@jest/globals';
import { EVENT_SCHEMA_VERSION, type MemoryEvent } from '@engram/domain';
import { decodeEventLine, encodeEventLine } from './event-line.js';

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
    expect(JSON.parse(line)).toMatchObject({ seq: 7, crc: expect.stringMatching(/^[0-9a-f]{8}$/) });
    expect(decodeEventLine(line.slice(0, -1))).toEqual({ ok: true, stored: event });
  });

  it('detects a flipped character, a torn line and garbage', () => {
    const line = encodeEventLine(event).slice(0, -1);
    expect(decodeEventLine(line.replace('quotes', 'quotas'))).toEqual({ ok: false, reason: 'checksum mismatch' });
    expect(decodeEventLine(line.slice(0, 40)).ok).toBe(false);
    expect(decodeEventLine('\u0000\u0000\u0000').ok).toBe(false);
    expect(decodeEventLine('').ok).toBe(false);
  });
});
