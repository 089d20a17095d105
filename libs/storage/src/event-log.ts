import {
  closeSync,
  constants,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { MemoryEvent, NewEvent } from '@engram/domain';
import { decodeEventLine, encodeEventLine } from './event-line.js';

export const DEFAULT_SEGMENT_MAX_BYTES = 64 * 1024 * 1024;
const SEGMENT_PATTERN = /^(\d{16})\.ndjson$/;
const APPEND_DURABLY = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC;

/** A complete line of the log is damaged: starting would silently lose or reorder events. */
export class EventLogCorruptError extends Error {
  override name = 'EventLogCorruptError';
  constructor(
    readonly segment: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`event log segment ${segment}, line ${line}: ${reason}; the log is damaged, refusing to start (see ops/RECOVERY.md)`);
  }
}

export interface EventLogOptions {
  readonly dir: string;
  readonly logger: Logger;
  readonly segmentMaxBytes?: number;
  /** Check only: a torn last line is an error instead of being cut, and pending redactions are not healed. */
  readonly readOnly?: boolean;
  /** Called once when a write or fsync fails and the log refuses further writes: the process should restart. */
  readonly onFatal?: (error: Error) => void;
}

interface Segment {
  readonly name: string;
  readonly path: string;
  readonly firstSeq: number;
  /** Byte offset of each line: offsets[i] holds seq firstSeq + i. */
  offsets: number[];
  size: number;
}

interface PendingAppend {
  readonly events: MemoryEvent[];
  readonly text: string;
  readonly resolve: (events: MemoryEvent[]) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The append-only event log: NDJSON segment files named by their first seq. Appends are
 * group-committed: everything queued while one durable write runs goes out in the next single
 * durable write, so concurrent writers share an fsync. An append resolves only once durable.
 * The active segment is open with O_DSYNC: a write returns once its bytes (and the file size) are
 * on disk, as write + fdatasync would, in one trip to libuv's thread pool instead of two.
 * A failed write or fsync is fatal for this instance (the caller restarts, and recovery cuts any
 * torn tail), because after a failed fsync nothing can be assumed about the file.
 */
export class EventLog {
  private readonly segments: Segment[];
  private readonly segmentMaxBytes: number;
  private active: FileHandle | null = null;
  private nextSeq: number;
  private durableSeq: number;
  private queue: PendingAppend[] = [];
  private onFatal: ((error: Error) => void) | undefined;
  private flushScheduled = false;
  private tail: Promise<unknown> = Promise.resolve();
  private failure: Error | null = null;
  private closed = false;
  private durableListener: ((events: readonly MemoryEvent[]) => void) | null = null;

  private constructor(
    private readonly dir: string,
    private readonly logger: Logger,
    segments: Segment[],
    segmentMaxBytes: number,
  ) {
    this.segments = segments;
    this.segmentMaxBytes = segmentMaxBytes;
    const last = segments.at(-1);
    this.durableSeq = last ? last.firstSeq + last.offsets.length - 1 : 0;
    this.nextSeq = this.durableSeq + 1;
  }

  /** Opens (or creates) the log, checks every line, cuts a torn last line, and heals pending purges. */
  static async open(options: EventLogOptions): Promise<EventLog> {
    mkdirSync(options.dir, { recursive: true });
    if (!options.readOnly) removeLeftovers(options.dir);
    const purged = new Set<string>();
    const segments = scanSegments(options.dir, options.logger, options.readOnly === true, purged);
    const log = new EventLog(options.dir, options.logger, segments, options.segmentMaxBytes ?? DEFAULT_SEGMENT_MAX_BYTES);
    log.onFatal = options.onFatal;
    if (options.readOnly) {
      log.closed = true;
      return log;
    }
    // A crash between a purge's event and its redaction leaves content behind: finish the job.
    if (purged.size > 0) await log.redact(purged);
    return log;
  }

  /** Last durable seq (0 for an empty log). */
  get lastSeq(): number {
    return this.durableSeq;
  }

  /** Called synchronously after each durable batch, in seq order, before the appends resolve. */
  onDurable(listener: (events: readonly MemoryEvent[]) => void): void {
    this.durableListener = listener;
  }

  /** Gives the events their seqs (gap-free, in call order) and resolves once they are on disk. */
  append(events: readonly NewEvent[]): Promise<MemoryEvent[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error('event log is closed'));
    if (events.length === 0) return Promise.resolve([]);
    const placed = events.map((event) => ({ ...event, seq: this.nextSeq++ }) as MemoryEvent);
    const text = placed.map(encodeEventLine).join('');
    return new Promise<MemoryEvent[]>((resolve, reject) => {
      this.queue.push({ events: placed, text, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        void this.serially(() => this.flush());
      }
    });
  }

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
      const lastInSegment = segment.firstSeq + segment.offsets.length - 1;
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
          const lines = readRangeOf(fd, start, end - start).split('\n');
          lines.forEach((line, offset) => {
            if (line === '') return;
            const decoded = decodeEventLine(line);
            if (!decoded.ok) throw new EventLogCorruptError(segment.name, firstLine + offset + 1, `${decoded.reason} (changed since start)`);
            events.push(decoded.event);
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
      const lastInSegment = segment.firstSeq + segment.offsets.length - 1;
      if (lastInSegment <= after) continue;
      const fromIndex = Math.max(0, after + 1 - segment.firstSeq);
      const lastIndex = Math.min(segment.offsets.length - 1, upTo - segment.firstSeq);
      if (lastIndex < fromIndex) return;
      // Read in chunks of lines so a large segment is never held whole just to page through it.
      for (let index = fromIndex; index <= lastIndex; index += 4096) {
        const chunkEnd = Math.min(lastIndex, index + 4095);
        const start = segment.offsets[index] ?? 0;
        const end = chunkEnd + 1 < segment.offsets.length ? (segment.offsets[chunkEnd + 1] ?? segment.size) : segment.size;
        const text = readRange(segment.path, start, end - start);
        for (const line of text.split('\n')) {
          if (line === '') continue;
          const decoded = decodeEventLine(line);
          if (!decoded.ok) throw new EventLogCorruptError(segment.name, index + 1, `${decoded.reason} (changed since start)`);
          yield decoded.event;
        }
      }
    }
  }

  /**
   * Forgets content for real: rewrites every line that carried content of these ids with the
   * content emptied and a fresh checksum (temp file, fsync, rename, fsync dir). Runs between
   * group commits, never during one. Returns the number of lines rewritten.
   */
  redact(ids: ReadonlySet<string>): Promise<number> {
    return this.serially(async () => {
      let rewritten = 0;
      for (const segment of this.segments) {
        const text = readFileSync(segment.path, 'utf8');
        const lines = text.split('\n');
        let changed = 0;
        const next = lines.map((line) => {
          if (line === '' || ![...ids].some((id) => line.includes(id))) return line;
          const decoded = decodeEventLine(line);
          if (!decoded.ok) return line;
          const redacted = redactEvent(decoded.event, ids);
          if (!redacted) return line;
          changed += 1;
          return encodeEventLine(redacted).slice(0, -1);
        });
        if (changed === 0) continue;
        const isActive = segment === this.segments.at(-1) && this.active !== null;
        if (isActive) await this.closeActive();
        const temp = `${segment.path}.redact-tmp`;
        const body = next.join('\n');
        writeFileSync(temp, body);
        fsyncPath(temp);
        renameSync(temp, segment.path);
        fsyncPath(this.dir);
        segment.offsets = lineOffsets(body);
        segment.size = Buffer.byteLength(body);
        rewritten += changed;
      }
      if (rewritten > 0) this.logger.info({ ids: [...ids], lines: rewritten }, 'redacted purged content in the event log');
      return rewritten;
    });
  }

  /** Waits for queued appends, then closes the file. Further appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
    await this.serially(async () => {
      await this.closeActive();
    });
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      if (this.failure) {
        for (const pending of batch) pending.reject(this.failure);
        continue;
      }
      const events = batch.flatMap((pending) => pending.events);
      try {
        const text = batch.map((pending) => pending.text).join('');
        const bytes = Buffer.from(text);
        const segment = await this.segmentFor(bytes.length, events[0]?.seq ?? this.durableSeq + 1);
        const handle = await this.activeHandle(segment);
        let written = 0;
        while (written < bytes.length) {
          const { bytesWritten } = await handle.write(bytes, written, bytes.length - written);
          written += bytesWritten;
        }
        let offset = segment.size;
        for (const pending of batch) {
          for (const line of pending.text.split('\n')) {
            if (line === '') continue;
            segment.offsets.push(offset);
            offset += Buffer.byteLength(line) + 1;
          }
        }
        segment.size = offset;
        this.durableSeq = events.at(-1)?.seq ?? this.durableSeq;
        this.durableListener?.(events);
      } catch (error) {
        this.failure = error instanceof Error ? error : new Error(String(error));
        this.logger.fatal({ err: this.failure }, 'event log append failed; refusing further writes until restart');
        for (const pending of batch) pending.reject(this.failure);
        this.onFatal?.(this.failure);
        continue;
      }
      for (const pending of batch) pending.resolve(pending.events);
    }
    this.flushScheduled = false;
  }

  private async segmentFor(bytes: number, firstSeq: number): Promise<Segment> {
    const current = this.segments.at(-1);
    if (current && (current.size === 0 || current.size + bytes <= this.segmentMaxBytes)) return current;
    await this.closeActive();
    const name = segmentName(firstSeq);
    const segment: Segment = { name, path: join(this.dir, name), firstSeq, offsets: [], size: 0 };
    writeFileSync(segment.path, '', { flag: 'wx' });
    fsyncPath(this.dir);
    this.segments.push(segment);
    return segment;
  }

  private async activeHandle(segment: Segment): Promise<FileHandle> {
    if (!this.active) this.active = await open(segment.path, APPEND_DURABLY);
    return this.active;
  }

  private async closeActive(): Promise<void> {
    const handle = this.active;
    this.active = null;
    if (handle) await handle.close();
  }
}

function redactEvent(event: MemoryEvent, ids: ReadonlySet<string>): MemoryEvent | undefined {
  switch (event.type) {
    case 'memory.stored':
      return ids.has(event.data.id) && event.data.content !== '' ? { ...event, data: { ...event.data, content: '' } } : undefined;
    case 'memory.consolidated':
      return ids.has(event.data.id) && event.data.content !== '' ? { ...event, data: { ...event.data, content: '' } } : undefined;
    case 'memory.updated':
      return ids.has(event.data.id) && event.data.content !== undefined && event.data.content !== ''
        ? { ...event, data: { ...event.data, content: '' } }
        : undefined;
    default:
      return undefined;
  }
}

export function segmentName(firstSeq: number): string {
  return `${String(firstSeq).padStart(16, '0')}.ndjson`;
}

/** Reads and checks every segment; cuts a torn last line (no newline); throws on any damaged complete line. */
function scanSegments(dir: string, logger: Logger, readOnly: boolean, purged: Set<string>): Segment[] {
  const names = readdirSync(dir)
    .filter((name) => SEGMENT_PATTERN.test(name))
    .sort();
  const segments: Segment[] = [];
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
  return segments;
}

/** A redaction interrupted before its rename leaves a temp file; the segment itself is intact. */
function removeLeftovers(dir: string): void {
  for (const name of readdirSync(dir)) if (name.endsWith('.redact-tmp')) rmSync(join(dir, name), { force: true });
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

function lineOffsets(text: string): number[] {
  const offsets: number[] = [];
  let offset = 0;
  for (const line of text.split('\n')) {
    if (line !== '') offsets.push(offset);
    offset += Buffer.byteLength(line) + 1;
  }
  return offsets;
}

function readRange(path: string, start: number, length: number): string {
  const fd = openSync(path, 'r');
  try {
    return readRangeOf(fd, start, length);
  } finally {
    closeSync(fd);
  }
}

function readRangeOf(fd: number, start: number, length: number): string {
  const buffer = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, buffer, read, length - read, start + read);
    if (n === 0) break;
    read += n;
  }
  return buffer.toString('utf8', 0, read);
}

export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
