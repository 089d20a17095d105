import { crc32 } from 'node:zlib';
import { UnsealError } from '@engram/config';
import { EVENT_SCHEMA_VERSION, type MemoryEvent } from '@engram/domain';
import type { EventCodec, StoredEvent } from './event-codec.js';

/**
 * One event per NDJSON line: the stored event (see EventCodec: the envelope, then `data` or, with a
 * key, `sealed`) as a JSON object with a last field `"crc":"<8 hex>"`, the CRC-32 of the line as it
 * would read without that field. The line stays plain JSON for humans and tools, and checking it
 * needs no re-serialisation: cut the fixed-size suffix and hash the rest. The checksum finds damage;
 * a sealed body's tag finds tampering.
 *
 * The object is the event in short (LINE_FIELDS): in a heavy user's log the envelope of each write
 * outweighed the text it carried, so its names are a letter or two, an id or causation that is a
 * UUID is its 16 bytes in base64url (`u`, `cu`), a time that is an ISO instant is its milliseconds,
 * the `memory.` of the type, a null causation and the current schema version are left out, and the
 * data's known fields are named short too (DATA_FIELDS; data with any other field is kept whole
 * under `D`). Lines written before, the event's own JSON (`"seq"`, `"type"`, ...), read as they
 * always did, so a log holds both and replays to the same database.
 */
const SUFFIX_LENGTH = ',"crc":"00000000"}'.length;
const SUFFIX_PATTERN = /,"crc":"([0-9a-f]{8})"\}$/;

/** The fields of a line: s seq, t type without `memory.`, i/u event id, a time, p pool, by actor, c/cu causation, v schema version, d/D data, x sealed data. */
interface Line {
  s: number;
  t: string;
  i?: string;
  u?: string;
  a: number | string;
  p: string;
  by: string;
  c?: string;
  cu?: string;
  v?: number;
  d?: Record<string, unknown>;
  D?: unknown;
  x?: string;
}

const TYPE_PREFIX = 'memory.';

/** The data fields of every event type (@engram/domain's events.ts), as a line names them. */
const DATA_FIELDS: ReadonlyMap<string, string> = new Map([
  ['id', 'i'],
  ['type', 't'],
  ['category', 'g'],
  ['content', 'c'],
  ['confidence', 'f'],
  ['source', 'o'],
  ['ids', 'is'],
  ['counts', 'n'],
  ['lastAt', 'l'],
  ['folds', 'fo'],
  ['confirmed', 'k'],
  ['reason', 'r'],
  ['forbids', 'fb'],
  ['supersedes', 'ss'],
  ['model', 'm'],
]);
const DATA_NAMES: ReadonlyMap<string, string> = new Map([...DATA_FIELDS].map(([name, short]) => [short, name]));

export function encodeEventLine(stored: StoredEvent): string {
  const line: Line = {
    s: stored.seq,
    t: stored.type.startsWith(TYPE_PREFIX) ? stored.type.slice(TYPE_PREFIX.length) : stored.type,
    a: '',
    p: '',
    by: '',
  };
  const id = packUuid(stored.id);
  if (id === null) line.i = stored.id;
  else line.u = id;
  line.a = packTime(stored.at);
  line.p = stored.pool;
  line.by = stored.actor;
  if (stored.causationId !== null) {
    const causation = packUuid(stored.causationId);
    if (causation === null) line.c = stored.causationId;
    else line.cu = causation;
  }
  if (stored.schemaVersion !== EVENT_SCHEMA_VERSION) line.v = stored.schemaVersion;
  if ('sealed' in stored) line.x = stored.sealed;
  else {
    const data = shortData(stored.data);
    if (data === null) line.D = stored.data;
    else line.d = data;
  }
  const body = JSON.stringify(line);
  return `${body.slice(0, -1)},"crc":"${checksum(body)}"}\n`;
}

const SHORT_LINE_START = Buffer.from('{"s":');

/** Whether a line (its bytes) is written in short; one written before starts with another field of the event. */
export function isShortLine(line: Buffer): boolean {
  return line.subarray(0, SHORT_LINE_START.length).equals(SHORT_LINE_START);
}

export type DecodedLine = { readonly ok: true; readonly stored: StoredEvent } | { readonly ok: false; readonly reason: string };

/** Decodes one line (without its newline) to the stored event. Never throws: a bad line is reported with the reason. */
export function decodeEventLine(line: string): DecodedLine {
  const match = SUFFIX_PATTERN.exec(line);
  if (!match) return { ok: false, reason: 'no checksum field at the end of the line' };
  const body = `${line.slice(0, -SUFFIX_LENGTH)}}`;
  if (checksum(body) !== match[1]) return { ok: false, reason: 'checksum mismatch' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'invalid JSON' };
  }
  const stored = typeof parsed === 'object' && parsed !== null && 's' in parsed ? storedOf(parsed as Line) : (parsed as StoredEvent | null);
  if (typeof stored?.seq !== 'number' || typeof stored.type !== 'string') return { ok: false, reason: 'not an event' };
  return { ok: true, stored };
}

/** A short line's stored event; null when a field has the wrong kind. */
function storedOf(line: Line): StoredEvent | null {
  if (typeof line.t !== 'string' || typeof line.p !== 'string' || typeof line.by !== 'string') return null;
  const id = line.u !== undefined ? unpackUuid(line.u) : line.i;
  const at = typeof line.a === 'number' ? new Date(line.a).toISOString() : line.a;
  const causationId = line.cu !== undefined ? unpackUuid(line.cu) : (line.c ?? null);
  if (typeof id !== 'string' || typeof at !== 'string') return null;
  const envelope = {
    type: line.t.includes('.') ? line.t : `${TYPE_PREFIX}${line.t}`,
    id,
    at,
    pool: line.p,
    actor: line.by,
    causationId,
    schemaVersion: line.v ?? EVENT_SCHEMA_VERSION,
    seq: line.s,
  };
  if (line.x !== undefined) return { ...envelope, sealed: line.x } as StoredEvent;
  return { ...envelope, data: line.d !== undefined ? longData(line.d) : line.D } as StoredEvent;
}

/** The data with its fields named short, or null when it has a field DATA_FIELDS does not name (kept whole then). */
function shortData(data: unknown): Record<string, unknown> | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const short: Record<string, unknown> = {};
  for (const name in data) {
    const field = DATA_FIELDS.get(name);
    if (field === undefined || !Object.hasOwn(data, name)) return null;
    short[field] = (data as Record<string, unknown>)[name];
  }
  return short;
}

function longData(short: Record<string, unknown>): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(short)) data[DATA_NAMES.get(field) ?? field] = value;
  return data;
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * A lowercase UUID as base64url of its 16 bytes (22 characters); null for any other id. Read straight
 * from the hex digits (three make two characters) rather than through a Buffer: this runs for every
 * event a write appends.
 */
function packUuid(id: string): string | null {
  if (id.length !== 36) return null;
  let packed = '';
  let bits = 0;
  let digits = 0;
  for (let index = 0; index < 36; index += 1) {
    const code = id.charCodeAt(index);
    if (index === 8 || index === 13 || index === 18 || index === 23) {
      if (code !== 0x2d) return null;
      continue;
    }
    const digit = code >= 0x30 && code <= 0x39 ? code - 0x30 : code >= 0x61 && code <= 0x66 ? code - 0x57 : -1;
    if (digit === -1) return null;
    bits = (bits << 4) | digit;
    digits += 1;
    if (digits === 3) {
      packed += BASE64URL.charAt(bits >> 6) + BASE64URL.charAt(bits & 63);
      bits = 0;
      digits = 0;
    }
  }
  // Two digits (8 bits) are left: two characters, the last one's low four bits zero.
  return packed + BASE64URL.charAt(bits >> 2) + BASE64URL.charAt((bits & 3) << 4);
}

function unpackUuid(packed: string): string | undefined {
  const hex = Buffer.from(packed, 'base64url').toString('hex');
  if (hex.length !== 32) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** An ISO instant as its milliseconds when that gives back the same text; any other time as it is. */
function packTime(at: string): number | string {
  // The events of one request, and often of one batch, share their time.
  if (at === lastPacked.at) return lastPacked.packed;
  const ms = Date.parse(at);
  const packed = Number.isFinite(ms) && new Date(ms).toISOString() === at ? ms : at;
  lastPacked = { at, packed };
  return packed;
}
let lastPacked: { at: string; packed: number | string } = { at: '', packed: '' };

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
