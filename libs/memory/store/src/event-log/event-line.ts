import { crc32 } from 'node:zlib';
import type { MemoryEvent } from '@engram/domain';

/**
 * One event per NDJSON line: the event's JSON with a last field `"crc":"<8 hex>"`, the CRC-32 of
 * the line as it would read without that field. The line stays plain JSON for humans and tools,
 * and checking it needs no re-serialisation: cut the fixed-size suffix and hash the rest.
 */
const SUFFIX_LENGTH = ',"crc":"00000000"}'.length;
const SUFFIX_PATTERN = /,"crc":"([0-9a-f]{8})"\}$/;

export function encodeEventLine(event: MemoryEvent): string {
  const body = JSON.stringify(event);
  return `${body.slice(0, -1)},"crc":"${checksum(body)}"}\n`;
}

export type DecodedLine = { readonly ok: true; readonly event: MemoryEvent } | { readonly ok: false; readonly reason: string };

/** Decodes one line (without its newline). Never throws: a bad line is reported with the reason. */
export function decodeEventLine(line: string): DecodedLine {
  const match = SUFFIX_PATTERN.exec(line);
  if (!match) return { ok: false, reason: 'no checksum field at the end of the line' };
  const body = `${line.slice(0, -SUFFIX_LENGTH)}}`;
  if (checksum(body) !== match[1]) return { ok: false, reason: 'checksum mismatch' };
  try {
    const event = JSON.parse(body) as MemoryEvent;
    if (typeof event.seq !== 'number' || typeof event.type !== 'string') return { ok: false, reason: 'not an event' };
    return { ok: true, event };
  } catch {
    return { ok: false, reason: 'invalid JSON' };
  }
}

function checksum(text: string): string {
  return crc32(text).toString(16).padStart(8, '0');
}
