import { crc32 } from 'node:zlib';
import { UnsealError } from '@engram/config';
import type { MemoryEvent } from '@engram/domain';
import type { EventCodec, StoredEvent } from './event-codec.js';

/**
 * One event per NDJSON line: the stored event's JSON (see EventCodec: the envelope, then `data` or,
 * with a key, `sealed`) with a last field `"crc":"<8 hex>"`, the CRC-32 of the line as it would read
 * without that field. The line stays plain JSON for humans and tools, and checking it needs no
 * re-serialisation: cut the fixed-size suffix and hash the rest. The checksum finds damage; a sealed
 * body's tag finds tampering.
 */
const SUFFIX_LENGTH = ',"crc":"00000000"}'.length;
const SUFFIX_PATTERN = /,"crc":"([0-9a-f]{8})"\}$/;

export function encodeEventLine(stored: StoredEvent): string {
  const body = JSON.stringify(stored);
  return `${body.slice(0, -1)},"crc":"${checksum(body)}"}\n`;
}

export type DecodedLine = { readonly ok: true; readonly stored: StoredEvent } | { readonly ok: false; readonly reason: string };

/** Decodes one line (without its newline) to the stored event. Never throws: a bad line is reported with the reason. */
export function decodeEventLine(line: string): DecodedLine {
  const match = SUFFIX_PATTERN.exec(line);
  if (!match) return { ok: false, reason: 'no checksum field at the end of the line' };
  const body = `${line.slice(0, -SUFFIX_LENGTH)}}`;
  if (checksum(body) !== match[1]) return { ok: false, reason: 'checksum mismatch' };
  try {
    const stored = JSON.parse(body) as StoredEvent;
    if (typeof stored.seq !== 'number' || typeof stored.type !== 'string') return { ok: false, reason: 'not an event' };
    return { ok: true, stored };
  } catch {
    return { ok: false, reason: 'invalid JSON' };
  }
}

function checksum(text: string): string {
  return crc32(text).toString(16).padStart(8, '0');
}

export type ReadLine = { readonly ok: true; readonly event: MemoryEvent } | { readonly ok: false; readonly reason: string };

/** Decodes one line and opens it with the codec. Never throws: a line that does not decode or open is reported with the reason. */
export function readEventLine(line: string, codec: EventCodec): ReadLine {
  const decoded = decodeEventLine(line);
  return decoded.ok ? openStored(decoded.stored, codec) : decoded;
}

/** A decoded line's event, or why it does not open (another key; a changed or moved sealed body; sealed without a key). */
export function openStored(stored: StoredEvent, codec: EventCodec): ReadLine {
  try {
    return { ok: true, event: codec.fromStored(stored) };
  } catch (error) {
    const reason =
      error instanceof UnsealError
        ? 'sealed data does not open with this key (a changed or moved line, or another key)'
        : String((error as Error).message);
    return { ok: false, reason };
  }
}
