import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { redacted } from '@engram/domain';
import type { EventCodec } from './event-codec.js';
import { decodeEventLine, encodeEventLine, openStored } from './event-line.js';
import { REDACTION_TEMP_SUFFIX, type Segment } from './event-segment.js';
import { fsyncPath } from './fsync.js';

/**
 * Forgets content for real: rewrites every line of the segment that carried content of these ids
 * with the content emptied (the domain's `redacted`) and a fresh checksum: temp file, fsync, rename,
 * fsync dir. A sealed line is opened (only those of the types that carry content: their ids are
 * sealed too) and the redacted event sealed again, under a fresh nonce. `beforeRewrite` runs first, only when a line changes (the appender lets go of the file).
 * Updates the segment's offsets; returns the number of lines rewritten.
 */
export async function redactSegment(
  segment: Segment,
  ids: ReadonlySet<string>,
  codec: EventCodec,
  beforeRewrite: () => Promise<void>,
): Promise<number> {
  const lines = readFileSync(segment.path, 'utf8').split('\n');
  let changed = 0;
  const next = lines.map((line) => {
    if (line === '') return line;
    if (!codec.sealing && ![...ids].some((id) => line.includes(id))) return line;
    const decoded = decodeEventLine(line);
    if (!decoded.ok || !CARRIES_CONTENT.has(decoded.stored.type)) return line;
    const opened = openStored(decoded.stored, codec);
    // A line that does not open stays as it is: a read of it says so, and rewriting it would hide the damage.
    if (!opened.ok) return line;
    const rewritten = redacted(opened.event, ids);
    if (!rewritten) return line;
    changed += 1;
    return encodeEventLine(codec.toStored(rewritten)).slice(0, -1);
  });
  if (changed === 0) return 0;
  await beforeRewrite();
  const temp = `${segment.path}${REDACTION_TEMP_SUFFIX}`;
  const body = next.join('\n');
  try {
    writeFileSync(temp, body);
    fsyncPath(temp);
  } catch (error) {
    // A half-written copy (ENOSPC) would only hold on to the space it took.
    rmSync(temp, { force: true });
    throw error;
  }
  renameSync(temp, segment.path);
  fsyncPath(dirname(segment.path));
  segment.offsets = lineOffsets(body);
  segment.size = Buffer.byteLength(body);
  return changed;
}

/** The event types whose data can hold an entry's text (see the domain's `redacted`). */
const CARRIES_CONTENT: ReadonlySet<string> = new Set(['memory.stored', 'memory.consolidated', 'memory.updated']);

function lineOffsets(text: string): number[] {
  const offsets: number[] = [];
  let offset = 0;
  for (const line of text.split('\n')) {
    if (line !== '') offsets.push(offset);
    offset += Buffer.byteLength(line) + 1;
  }
  return offsets;
}
