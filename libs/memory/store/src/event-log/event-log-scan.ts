import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EventCodec } from './event-codec.js';
import { decodeEventLine, openStored } from './event-line.js';
import { COMPACTION_TEMP_SUFFIX, EventLogCorruptError, REDACTION_TEMP_SUFFIX, SEGMENT_PATTERN, type Segment } from './event-segment.js';

export interface ScannedLog {
  readonly segments: Segment[];
  /** Ids whose purge is in the log: their content must be gone from it (a redaction may not have finished). */
  readonly purged: ReadonlySet<string>;
}

/**
 * The start-up scan: reads and checks every line of every segment (checksum; seqs from 1 without a
 * gap, except the events a compacted reference stands for: see `folds` in MemoryReferencedData) and
 * records where each line starts. Cuts a torn last line (no newline: a write cut short by a crash)
 * unless read-only; throws on any damaged complete line. A segment whose events all come before the
 * end of the segment in front of it is what an interrupted compaction left: removed (read-only:
 * skipped).
 */
export function scanEventLog(dir: string, logger: Logger, readOnly: boolean, codec: EventCodec): ScannedLog {
  if (!readOnly) removeInterruptedRewrites(dir);
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
    if (firstSeq < expected && segments.length > 0 && lastSeqOfFile(path) < expected) {
      if (!readOnly) rmSync(path);
      logger.warn({ segment: name, removed: !readOnly }, 'a segment an interrupted compaction had already summed into the one before it');
      return;
    }
    if (firstSeq !== expected) {
      throw new EventLogCorruptError(name, 1, `segment starts at seq ${firstSeq}, expected ${expected} (a segment is missing)`);
    }
    const buffer = readFileSync(path);
    const offsets: number[] = [];
    const seqs: number[] = [];
    let gaps = false;
    let referenceBytes = 0;
    let compacted = false;
    /** Seqs skipped in this segment that no compacted reference has accounted for yet. */
    let missing = 0;
    let firstGap = { line: 0, seq: 0 };
    let offset = 0;
    let lineNumber = 0;
    while (offset < buffer.length) {
      lineNumber += 1;
      const newline = buffer.indexOf(0x0a, offset);
      const end = newline === -1 ? buffer.length : newline;
      const line = buffer.toString('utf8', offset, end);
      const decoded = newline === -1 ? { ok: false as const, reason: 'incomplete last line' } : scanLine(line, codec);
      const folds = decoded.ok ? decoded.event.folds : undefined;
      const skipped = decoded.ok ? decoded.event.seq - expected : 0;
      const problem = !decoded.ok
        ? decoded.reason
        : skipped < 0
          ? `seq ${decoded.event.seq}, expected ${expected}`
          : folds && (folds.from < firstSeq || folds.events - 1 > missing + skipped)
            ? `seq ${decoded.event.seq} sums ${folds.events} events from seq ${folds.from}, more than the segment leaves out before it`
            : null;
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
      if (!decoded.ok) break;
      const { event } = decoded;
      if (event.purged !== undefined) purged.add(event.purged);
      if (event.type === 'memory.referenced') {
        if (folds) compacted = true;
        else referenceBytes += end - offset + 1;
      }
      if (skipped > 0 && missing === 0) firstGap = { line: lineNumber, seq: expected };
      missing += skipped - (folds ? folds.events - 1 : 0);
      if (skipped > 0) gaps = true;
      offsets.push(offset);
      seqs.push(event.seq);
      expected = event.seq + 1;
      offset = end + 1;
    }
    if (missing > 0) {
      throw new EventLogCorruptError(
        name,
        firstGap.line,
        `seq ${firstGap.seq} is missing (${missing} in this segment), and no compacted reference stands for it`,
      );
    }
    segments.push({
      name,
      path,
      firstSeq,
      offsets,
      ...(gaps ? { seqs } : {}),
      size: Math.min(offset, buffer.length),
      referenceBytes,
      compacted,
    });
  });
  return { segments, purged };
}

/** What the scan needs of a line: its place, and what a purge or a compacted reference says. */
interface ScannedEvent {
  readonly seq: number;
  readonly type: string;
  readonly folds?: { readonly from: number; readonly events: number } | undefined;
  /** The entry a memory.purged event purges. */
  readonly purged?: string;
}

/**
 * Checks a line (checksum, stored as the codec stores: sealed with a key, clear without) and opens only
 * the events whose data the scan needs (purges, references): the rest are opened when read.
 */
function scanLine(line: string, codec: EventCodec): { ok: true; event: ScannedEvent } | { ok: false; reason: string } {
  const decoded = decodeEventLine(line);
  if (!decoded.ok) return decoded;
  const { stored } = decoded;
  if ('sealed' in stored !== codec.sealing) {
    return {
      ok: false,
      reason: codec.sealing ? 'not sealed, in a sealed log' : 'sealed, and no encryption key is configured (ENGRAM_ENCRYPTION_KEY)',
    };
  }
  if (stored.type !== 'memory.referenced' && stored.type !== 'memory.purged') return { ok: true, event: { seq: stored.seq, type: stored.type } };
  const opened = openStored(stored, codec);
  if (!opened.ok) return opened;
  const { event } = opened;
  if (event.type === 'memory.purged') return { ok: true, event: { seq: event.seq, type: event.type, purged: event.data.id } };
  return { ok: true, event: { seq: event.seq, type: event.type, folds: event.type === 'memory.referenced' ? event.data.folds : undefined } };
}

/** The seq of a segment file's last complete line (0 when it has none that decodes). */
function lastSeqOfFile(path: string): number {
  const lines = readFileSync(path, 'utf8').split('\n');
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const decoded = decodeEventLine(lines[index] ?? '');
    if (decoded.ok) return decoded.stored.seq;
  }
  return 0;
}

/** A redaction or compaction interrupted before its rename leaves a temp file; the segments themselves are intact. */
function removeInterruptedRewrites(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (name.endsWith(REDACTION_TEMP_SUFFIX) || name.endsWith(COMPACTION_TEMP_SUFFIX)) rmSync(join(dir, name), { force: true });
  }
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
