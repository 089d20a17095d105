import { crc32 } from 'node:zlib';
import type { StoredEvent } from '../event-log/event-codec.js';

/** A line as the log wrote it before lines were short (event-line.ts): the stored event's own JSON, then its checksum. */
export function legacyEventLine(stored: StoredEvent): string {
  const body = JSON.stringify(stored);
  return `${body.slice(0, -1)},"crc":"${crc32(body).toString(16).padStart(8, '0')}"}\n`;
}
