import { describe, expect, it } from '@jest/globals';
import { decodeCursor, encodeCursor } from './page-cursor.js';

describe('page cursor', () => {
  it('round-trips a position, keeping a floating sort key exactly', () => {
    const position = { sort: 'confidence' as const, key: 0.6302494097246091, rowid: 42, today: 2461131.523 };
    expect(decodeCursor(encodeCursor(position), 'confidence')).toEqual(position);
  });

  it('refuses a cursor from another sort, or anything it did not make, as the caller’s mistake', () => {
    const created = encodeCursor({ sort: 'created', key: '2026-05-01T12:00:00.000Z', rowid: 3, today: 1 });
    for (const [cursor, sort] of [
      [created, 'confidence'],
      ['not base64 json', 'created'],
      [Buffer.from('["created",1,2,3]').toString('base64url'), 'created'],
      [Buffer.from('{"a":1}').toString('base64url'), 'created'],
      [42, 'created'],
    ] as const) {
      let thrown: unknown;
      try {
        decodeCursor(cursor, sort);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'invalid_request' });
    }
  });
});
