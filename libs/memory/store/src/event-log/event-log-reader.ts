import { closeSync, openSync, readSync } from 'node:fs';
import type { MemoryEvent } from '@engram/domain';
import { decodeEventLine } from './event-line.js';
import { EventLogCorruptError, lastSeqIn, type Segment } from './event-segment.js';

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
   * number of events asked for, not the size of the log. Neighbouring seqs are read in one go.
   */
  readSeqs(seqs: readonly number[]): MemoryEvent[] {
    const events: MemoryEvent[] = [];
    let index = 0;
    for (const segment of this.segments) {
      if (index >= seqs.length) break;
      const lastInSegment = lastSeqIn(segment);
      if ((seqs[index] ?? 0) > lastInSegment) continue;
      const fd = openSync(segment.path, 'r');
      try {
        while (index < seqs.length && (seqs[index] ?? 0) <= Math.min(lastInSegment, this.durableSeq)) {
          let runEnd = index;
          while (runEnd + 1 < seqs.length && seqs[runEnd + 1] === (seqs[runEnd] ?? 0) + 1 && (seqs[runEnd + 1] ?? 0) <= lastInSegment) runEnd += 1;
          const firstLine = (seqs[index] ?? 0) - segment.firstSeq;
          const lastLine = (seqs[runEnd] ?? 0) - segment.firstSeq;
          const start = segment.offsets[firstLine] ?? 0;
          const end = segment.offsets[lastLine + 1] ?? segment.size;
          const lines = readRange(fd, start, end - start).split('\n');
          lines.forEach((line, offset) => {
            if (line === '') return;
            events.push(decodeDurable(line, segment, firstLine + offset + 1));
          });
          index = runEnd + 1;
        }
      } finally {
        closeSync(fd);
      }
      if (index < seqs.length && (seqs[index] ?? 0) > this.durableSeq) break;
    }
    return events;
  }

  /** Streams durable events with seq > after, reading the segments lazily from the right offset. */
  *eventsAfter(after: number): Generator<MemoryEvent> {
    const upTo = this.durableSeq;
    for (const segment of this.segments) {
      if (lastSeqIn(segment) <= after) continue;
      const fromIndex = Math.max(0, after + 1 - segment.firstSeq);
      const lastIndex = Math.min(segment.offsets.length - 1, upTo - segment.firstSeq);
      if (lastIndex < fromIndex) return;
      for (let index = fromIndex; index <= lastIndex; index += STREAM_CHUNK_LINES) {
        const chunkEnd = Math.min(lastIndex, index + STREAM_CHUNK_LINES - 1);
        const start = segment.offsets[index] ?? 0;
        const end = chunkEnd + 1 < segment.offsets.length ? (segment.offsets[chunkEnd + 1] ?? segment.size) : segment.size;
        for (const line of readFileRange(segment.path, start, end - start).split('\n')) {
          if (line === '') continue;
          yield decodeDurable(line, segment, index + 1);
        }
      }
    }
  }
}

function decodeDurable(line: string, segment: Segment, lineNumber: number): MemoryEvent {
  const decoded = decodeEventLine(line);
  if (!decoded.ok) throw new EventLogCorruptError(segment.name, lineNumber, `${decoded.reason} (changed since start)`);
  return decoded.event;
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
