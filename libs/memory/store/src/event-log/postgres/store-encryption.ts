import type pg from 'pg';
import { redactedUrl } from '@engram/config';
import { EVENT_SCHEMA_VERSION, type MemoryEvent } from '@engram/domain';
import type { EventCodec, StoredEvent } from '../event-codec.js';
import { EVENT_COLUMNS, storedOfRow, type EventRow } from './event-row.js';

/** Replicas of one event store that would keep its rows in two encodings (their keys differ). */
export class EventStoreKeyError extends Error {
  override name = 'EventStoreKeyError';
}

/** The event whose stored form records how the store keeps bodies: never a row, only `event_position.key_check`. */
const KEY_CHECK: MemoryEvent = {
  seq: 0,
  type: 'memory.purged',
  id: 'engram-key-check',
  at: '1970-01-01T00:00:00.000Z',
  pool: 'engram',
  actor: 'system',
  causationId: null,
  schemaVersion: EVENT_SCHEMA_VERSION,
  data: { id: 'engram-key-check' },
};

/**
 * Every replica of one event store must keep event bodies alike: all in the clear, or all sealed with
 * one key (ENGRAM_ENCRYPTION_KEY). The first replica to start records KEY_CHECK as its codec stores it;
 * a replica whose codec does not read that back (nor the table's first row, for a table written before
 * the record) is refused with one line saying which way its key differs. `claim` false (verify, log
 * copy's source) checks without recording.
 */
export async function checkStoreEncryption(pool: pg.Pool, codec: EventCodec, url: string, claim: boolean): Promise<void> {
  const { rows: first } = await pool.query<EventRow>(`SELECT ${EVENT_COLUMNS.join(', ')} FROM events ORDER BY seq LIMIT 1`);
  if (first[0]) assertReads(codec, storedOfRow(first[0]), url);
  if (claim) await pool.query('UPDATE event_position SET key_check = $1 WHERE key_check IS NULL', [JSON.stringify(codec.toStored(KEY_CHECK))]);
  const { rows } = await pool.query<{ key_check?: string | null }>('SELECT * FROM event_position');
  const recorded = rows[0]?.key_check;
  if (recorded) assertReads(codec, JSON.parse(recorded) as StoredEvent, url);
}

function assertReads(codec: EventCodec, stored: StoredEvent, url: string): void {
  const sealed = 'sealed' in stored;
  const store = `the event store ${redactedUrl(url)}`;
  const same = 'every replica of one event store needs the same ENGRAM_ENCRYPTION_KEY (or ENGRAM_ENCRYPTION_KEY_FILE), or none';
  if (sealed && !codec.sealing) throw new EventStoreKeyError(`${store} is encrypted and this replica has no key: ${same}`);
  if (!sealed && codec.sealing) throw new EventStoreKeyError(`${store} is not encrypted and this replica has a key: ${same}`);
  try {
    codec.fromStored(stored);
  } catch {
    throw new EventStoreKeyError(`${store} is encrypted with another key than this replica's: ${same}`);
  }
}
