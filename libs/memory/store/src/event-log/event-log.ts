import { constants, mkdirSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { MemoryEvent, NewEvent } from '@engram/domain';
import { encodeEventLine } from './event-line.js';
import { EventLogReader } from './event-log-reader.js';
import { redactSegment } from './event-log-redaction.js';
import { scanEventLog } from './event-log-scan.js';
import { lastSeqIn, segmentName, type Segment } from './event-segment.js';
import type { EventStore } from './event-store.js';
import { fsyncPath } from './fsync.js';

export { EventLogCorruptError } from './event-segment.js';

export const DEFAULT_SEGMENT_MAX_BYTES = 64 * 1024 * 1024;
const APPEND_DURABLY = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC;

export interface EventLogOptions {
  readonly dir: string;
  readonly logger: Logger;
  readonly segmentMaxBytes?: number;
  /** Check only: a torn last line is an error instead of being cut, and pending redactions are not healed. */
  readonly readOnly?: boolean;
  /** Called once when a write or fsync fails and the log refuses further writes: the process should restart. */
  readonly onFatal?: (error: Error) => void;
}

/**
 * The append-only event log, the file-backed `EventStore`: NDJSON segment files named by their
 * first seq. Each append is one durable write of the whole batch it is given; batching concurrent
 * writers is the WritePipeline's job (one group commit, one owner), so the log never merges calls.
 * The active segment is open with O_DSYNC: a write returns once its bytes (and the file size) are
 * on disk, as write + fdatasync would, in one trip to libuv's thread pool instead of two.
 * A failed write or fsync is fatal for this instance (the caller restarts, and recovery cuts any
 * torn tail), because after a failed fsync nothing can be assumed about the file.
 * Opening runs the start-up scan (event-log-scan.ts); reads are the reader's (event-log-reader.ts).
 */
export class EventLog extends EventLogReader implements EventStore {
  private readonly segmentMaxBytes: number;
  private active: FileHandle | null = null;
  private onFatal: ((error: Error) => void) | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private failure: Error | null = null;
  private closed = false;

  private constructor(
    private readonly dir: string,
    private readonly logger: Logger,
    segments: Segment[],
    segmentMaxBytes: number,
  ) {
    const last = segments.at(-1);
    super(segments, last ? lastSeqIn(last) : 0);
    this.segmentMaxBytes = segmentMaxBytes;
  }

  /** Opens (or creates) the log, checks every line, cuts a torn last line, and heals pending purges. */
  static async open(options: EventLogOptions): Promise<EventLog> {
    mkdirSync(options.dir, { recursive: true });
    const { segments, purged } = scanEventLog(options.dir, options.logger, options.readOnly === true);
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

  /** Gives the batch its seqs (gap-free, in call order) and resolves once all of it is on disk, written in one go. */
  append(batch: readonly NewEvent[]): Promise<MemoryEvent[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error('event log is closed'));
    if (batch.length === 0) return Promise.resolve([]);
    return this.serially(() => this.writeDurably(batch));
  }

  /**
   * Forgets content for real: rewrites every line that carried content of these ids (see
   * event-log-redaction.ts). Runs between appends, never during one. Returns the number of
   * lines rewritten.
   */
  redact(ids: ReadonlySet<string>): Promise<number> {
    return this.serially(async () => {
      let rewritten = 0;
      for (const segment of this.segments) {
        const isActive = segment === this.segments.at(-1);
        rewritten += await redactSegment(segment, ids, async () => {
          if (isActive) await this.closeActive();
        });
      }
      if (rewritten > 0) this.logger.info({ ids: [...ids], lines: rewritten }, 'redacted purged content in the event log');
      return rewritten;
    });
  }

  /** Waits for the append in progress, then closes the file. Further appends are refused. */
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

  private async writeDurably(batch: readonly NewEvent[]): Promise<MemoryEvent[]> {
    if (this.failure) throw this.failure;
    const firstSeq = this.durableSeq + 1;
    const placed = batch.map((event, index) => ({ ...event, seq: firstSeq + index }) as MemoryEvent);
    const lines = placed.map(encodeEventLine);
    const bytes = Buffer.from(lines.join(''));
    try {
      const segment = await this.segmentFor(bytes.length, firstSeq);
      const handle = await this.activeHandle(segment);
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, written, bytes.length - written);
        written += bytesWritten;
      }
      let offset = segment.size;
      for (const line of lines) {
        segment.offsets.push(offset);
        offset += Buffer.byteLength(line);
      }
      segment.size = offset;
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.logger.fatal({ err: this.failure }, 'event log append failed; refusing further writes until restart');
      this.onFatal?.(this.failure);
      throw this.failure;
    }
    this.durableSeq = firstSeq + placed.length - 1;
    return placed;
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
