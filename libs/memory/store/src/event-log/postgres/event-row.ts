import { crc32 } from 'node:zlib';
import type { MemoryEvent } from '@engram/domain';
import type { EventCodec, StoredEvent } from '../event-codec.js';

/** One row of the `events` table, as node-postgres returns it (bigint columns as strings). */
export interface EventRow {
  readonly seq: string | number;
  readonly pool: string;
  readonly version: string | number;
  readonly id: string;
  readonly type: string;
  readonly at: string;
  /** JSON of the envelope's other fields (actor, causationId, schemaVersion), in the clear. */
  readonly envelope: string;
  readonly sealed: boolean;
  /** JSON of `data`, or the sealed string. */
  readonly body: string;
  readonly crc: string;
}

/** The columns in insert order. */
export const EVENT_COLUMNS = ['seq', 'pool', 'version', 'id', 'type', 'at', 'envelope', 'sealed', 'body', 'crc'] as const;

/** The row of an event at `version` of its pool: the codec decides whether `data` is stored as it is or sealed. */
export function eventRow(event: MemoryEvent, version: number, codec: EventCodec): EventRow {
  const stored = codec.toStored(event);
  const { seq, pool, id, type, at, ...rest } = stored;
  const sealed = 'sealed' in rest;
  const { data: _data, sealed: _sealed, ...envelopeFields } = rest as Record<string, unknown>;
  const body = sealed ? (rest as { sealed: string }).sealed : JSON.stringify((rest as { data: unknown }).data);
  const row = { seq, pool, version, id, type, at, envelope: JSON.stringify(envelopeFields), sealed, body };
  return { ...row, crc: rowChecksum(row) };
}

/** Whether the row reads as it was written: its checksum over every column but itself. */
export function rowIntact(row: EventRow): boolean {
  return rowChecksum(row) === row.crc;
}

/** The event a row holds, opened through the codec. Throws when its checksum does not match. */
export function eventOfRow(row: EventRow, codec: EventCodec): MemoryEvent {
  if (!rowIntact(row)) throw new EventRowCorruptError(Number(row.seq), 'checksum mismatch');
  return codec.fromStored(storedOfRow(row));
}

export function storedOfRow(row: EventRow): StoredEvent {
  const envelope = JSON.parse(row.envelope) as Record<string, unknown>;
  const head = { seq: Number(row.seq), type: row.type, id: row.id, at: row.at, pool: row.pool, ...envelope };
  return (row.sealed ? { ...head, sealed: row.body } : { ...head, data: JSON.parse(row.body) as unknown }) as StoredEvent;
}

export class EventRowCorruptError extends Error {
  override name = 'EventRowCorruptError';
  constructor(
    readonly seq: number,
    reason: string,
  ) {
    super(`event store row at seq ${seq}: ${reason}`);
  }
}

function rowChecksum(row: Omit<EventRow, 'crc'>): string {
  const text = JSON.stringify([Number(row.seq), row.pool, Number(row.version), row.id, row.type, row.at, row.envelope, row.sealed, row.body]);
  return crc32(text).toString(16).padStart(8, '0');
}
