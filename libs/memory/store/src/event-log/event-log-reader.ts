import { closeSync, openSync, readSync } from 'node:fs';
import type { MemoryEvent } from '@engram/domain';
import type { EventCodec } from './event-codec.js';
import { decodeEventLine, openStored } from './event-line.js';
import { EventLogCorruptError, lastSeqIn, lineAtOrAfter, seqAt, type Segment } from './event-segment.js';

/** Lines read at a time when streaming, so a large segment is never held whole just to page through it. */
const STREAM_CHUNK_LINES = 4096;

/**
 * Reads the durable part of the log: each line at the offset the start-up scan (and every append
 * since) recorded for it, so a read costs what it returns, not the size of the log. A line that no
 * longer decodes was changed on disk since the scan checked it: that is damage, and an error.
 */
export class EventLogReader {
  protected constructor(
    protected readonly segments: Segment[],
    /** Last seq on disk: nothing after it is read, even if a write is in flight. */
    protected durableSeq: number,
    /** How each line's event is stored (sealed with a key). */
    protected readonly codec: EventCodec,
  ) {}

  /** Durable events with seq > after, in order, at most `limit`. */
  read(after: number, limit = Number.POSITIVE_INFINITY, accept: (event: MemoryEvent) => boolean = () => true): MemoryEvent[] {
    const events: MemoryEvent[] = [];
    for (const event of this.eventsAfter(after)) {
      if (!accept(event)) continue;
      events.push(event);
      if (events.length >= limit) break;
    }
    return events;
  }

  /**
   * The durable events with these seqs (ascending), each read at its offset: the cost follows the
   * number of events asked for, not the size of the log. Neighbouring lines are read in one go. A seq
   * the log no longer holds (a reference compaction summed into a later event) is skipped.
   */
  readSeqs(seqs: readonly number[]): MemoryEvent[] {
    const events: MemoryEvent[] = [];
    let next = 0;
    for (const segment of this.segments) {
      if (next >= seqs.length) break;
      const lastInSegment = Math.min(lastSeqIn(segment), this.durableSeq);
      const lines: number[] = [];
      for (; next < seqs.length && (seqs[next] ?? 0) <= lastInSegment; next += 1) {
        const seq = seqs[next] ?? 0;
        const line = lineAtOrAfter(segment, seq);
        if (line < segment.offsets.length && seqAt(segment, line) === seq && lines.at(-1) !== line) lines.push(line);
      }
      if (lines.length === 0) continue;
      const fd = openSync(segment.path, 'r');
      try {
        for (let start = 0; start < lines.length;) {
          let end = start;
          while (end + 1 < lines.length && lines[end + 1] === (lines[end] ?? 0) + 1) end += 1;
          const firstLine = lines[start] ?? 0;
          const lastLine = lines[end] ?? 0;
          const from = segment.offsets[firstLine] ?? 0;
          const to = segment.offsets[lastLine + 1] ?? segment.size;
          readRange(fd, from, to - from)
            .split('\n')
            .forEach((text, offset) => {
              if (text !== '') events.push(decodeDurable(text, segment, firstLine + offset + 1, this.codec));
            });
          start = end + 1;
        }
      } finally {
        closeSync(fd);
      }
    }
    return events;
  }

  /** Streams durable events with seq > after, reading the segments lazily from the right offset. */
  *eventsAfter(after: number): Generator<MemoryEvent> {
    const upTo = this.durableSeq;
    for (const segment of this.segments) {
      if (lastSeqIn(segment) <= after) continue;
      const fromIndex = lineAtOrAfter(segment, after + 1);
      const lastIndex = lineAtOrAfter(segment, upTo + 1) - 1;
      if (lastIndex < fromIndex) return;
      for (let index = fromIndex; index <= lastIndex; index += STREAM_CHUNK_LINES) {
        const chunkEnd = Math.min(lastIndex, index + STREAM_CHUNK_LINES - 1);
        const start = segment.offsets[index] ?? 0;
        const end = segment.offsets[chunkEnd + 1] ?? segment.size;
        let line = index;
        for (const text of readFileRange(segment.path, start, end - start).split('\n')) {
          if (text === '') continue;
          line += 1;
          yield decodeDurable(text, segment, line, this.codec);
        }
      }
    }
  }
}

/** A line's event; a line that no longer decodes, or does not open, is damage (or tampering) and names its segment and line. */
function decodeDurable(line: string, segment: Segment, lineNumber: number, codec: EventCodec): MemoryEvent {
  const decoded = decodeEventLine(line);
  if (!decoded.ok) throw new EventLogCorruptError(segment.name, lineNumber, `${decoded.reason} (changed since start)`);
  const opened = openStored(decoded.stored, codec);
  if (!opened.ok) throw new EventLogCorruptError(segment.name, lineNumber, opened.reason);
  return opened.event;
}

function readFileRange(path: string, start: number, length: number): string {
  const fd = openSync(path, 'r');
  try {
    return readRange(fd, start, length);
  } finally {
    closeSync(fd);
  }
}

function readRange(fd: number, start: number, length: number): string {
  const buffer = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, buffer, read, length - read, start + read);
    if (n === 0) break;
    read += n;
  }
  return buffer.toString('utf8', 0, read);
}
