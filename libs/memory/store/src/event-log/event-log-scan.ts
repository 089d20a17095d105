import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { decodeEventLine } from './event-line.js';
import { EventLogCorruptError, REDACTION_TEMP_SUFFIX, SEGMENT_PATTERN, type Segment } from './event-segment.js';

export interface ScannedLog {
  readonly segments: Segment[];
  /** Ids whose purge is in the log: their content must be gone from it (a redaction may not have finished). */
  readonly purged: ReadonlySet<string>;
}

/**
 * The start-up scan: reads and checks every line of every segment (checksum, gap-free seqs from 1)
 * and records where each line starts. Cuts a torn last line (no newline: a write cut short by a
 * crash) unless read-only; throws on any damaged complete line.
 */
export function scanEventLog(dir: string, logger: Logger, readOnly: boolean): ScannedLog {
  if (!readOnly) removeInterruptedRedactions(dir);
  const names = readdirSync(dir)
    .filter((name) => SEGMENT_PATTERN.test(name))
    .sort();
  const segments: Segment[] = [];
  const purged = new Set<string>();
  let expected = 1;
  names.forEach((name, segmentIndex) => {
    const isLastSegment = segmentIndex === names.length - 1;
    const path = join(dir, name);
    const firstSeq = Number(SEGMENT_PATTERN.exec(name)?.[1]);
    if (firstSeq !== expected) {
      throw new EventLogCorruptError(name, 1, `segment starts at seq ${firstSeq}, expected ${expected} (a segment is missing)`);
    }
    const buffer = readFileSync(path);
    const offsets: number[] = [];
    let offset = 0;
    let lineNumber = 0;
    while (offset < buffer.length) {
      lineNumber += 1;
      const newline = buffer.indexOf(0x0a, offset);
      const end = newline === -1 ? buffer.length : newline;
      const line = buffer.toString('utf8', offset, end);
      const decoded = newline === -1 ? { ok: false as const, reason: 'incomplete last line' } : decodeEventLine(line);
      const problem = !decoded.ok ? decoded.reason : decoded.event.seq !== expected ? `seq ${decoded.event.seq}, expected ${expected}` : null;
      if (problem !== null) {
        const rest = buffer.subarray(offset);
        // Only a write cut short by a crash: it never got its newline. A complete line that fails its
        // checksum is damage (a disk, a person), and cutting it could drop an event such as a purge.
        const onlyTornTail = isLastSegment && newline === -1;
        if (!onlyTornTail) throw new EventLogCorruptError(name, lineNumber, problem);
        if (readOnly) throw new EventLogCorruptError(name, lineNumber, `torn last line (${problem}); starting the service cuts it`);
        cutTail(path, offset);
        logger.warn({ segment: name, line: lineNumber, bytes: rest.length, reason: problem }, 'cut a torn last line of the event log');
        break;
      }
      if (decoded.ok && decoded.event.type === 'memory.purged') purged.add(decoded.event.data.id);
      offsets.push(offset);
      expected += 1;
      offset = end + 1;
    }
    segments.push({ name, path, firstSeq, offsets, size: Math.min(offset, buffer.length) });
  });
  return { segments, purged };
}

/** A redaction interrupted before its rename leaves a temp file; the segment itself is intact. */
function removeInterruptedRedactions(dir: string): void {
  for (const name of readdirSync(dir)) if (name.endsWith(REDACTION_TEMP_SUFFIX)) rmSync(join(dir, name), { force: true });
}

function cutTail(path: string, length: number): void {
  const fd = openSync(path, 'r+');
  try {
    // Truncate through the descriptor we fsync, so the cut itself is durable.
    ftruncateSync(fd, length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
