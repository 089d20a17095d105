import { constants, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EventOf, MemoryEvent, NewEvent } from '@engram/domain';
import { compactGroup } from './event-log-compaction.js';
import type { RemovedEvent } from '../projection/event-index.js';
import type { EventCodec } from './event-codec.js';
import { encodeEventLine } from './event-line.js';
import { EventLogReader } from './event-log-reader.js';
import { redactSegment } from './event-log-redaction.js';
import { scanEventLog } from './event-log-scan.js';
import { lastSeqIn, segmentName, type Segment } from './event-segment.js';
import type { EventStore } from './event-store.js';
import { fsyncPath } from './fsync.js';
import { AppendRolledBack, isOutOfSpace } from '../data-dir/out-of-space.js';

export { EventLogCorruptError } from './event-segment.js';

export const DEFAULT_SEGMENT_MAX_BYTES = 64 * 1024 * 1024;
const APPEND_DURABLY = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC;
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;

export interface EventLogOptions {
  readonly dir: string;
  readonly logger: Logger;
  /** How each line stores its event: plainEventCodec, or sealed with the data dir's key (eventCodecOf). */
  readonly codec: EventCodec;
  readonly segmentMaxBytes?: number;
  /** Check only: a torn last line is an error instead of being cut, and pending redactions are not healed. */
  readonly readOnly?: boolean;
  /** Called once when a write or fsync fails and the log refuses further writes: the process should restart. */
  readonly onFatal?: (error: Error) => void;
  /**
   * false: an append resolves once the kernel has its bytes, not the disk (no O_DSYNC). Only for a copy
   * of a store that is the source of truth and makes the copy's lost tail again (PostgresEventStore's).
   */
  readonly durable?: boolean;
  /**
   * Compacts by itself once the references it has not summed yet weigh at least `minReferenceBytes`
   * and `shareOfRest` times the rest of the log (see compact()). Absent: only when asked.
   */
  readonly autoCompact?: { readonly minReferenceBytes: number; readonly shareOfRest: number };
  /** Told of each compaction once it is in place (the projection's event index follows it). */
  readonly onCompacted?: (compaction: LogCompaction) => void;
}

/** What a compaction changed. */
export interface LogCompaction {
  /** Events the log no longer holds: references summed into a later event. */
  readonly removed: readonly RemovedEvent[];
  /** The events that sum them, each at the seq of its pool's last reference it replaced. */
  readonly summaries: readonly EventOf<'memory.referenced'>[];
  readonly bytesBefore: number;
  readonly bytesAfter: number;
}

/**
 * The default of `autoCompact` in the memory service: a log of heavy search use stays within ~1.05x of
 * what it holds besides references (a heavy user's year, 100,000 searches: about 200 compactions, each
 * a fold of a log that is then ~1.6 MB).
 */
export const AUTO_COMPACT = { minReferenceBytes: 64 * 1024, shareOfRest: 0.05 } as const;

/**
 * The append-only event log, the file-backed `EventStore`: NDJSON segment files named by their
 * first seq. Each append is one durable write of the whole batch it is given; batching concurrent
 * writers is the WritePipeline's job (one group commit, one owner), so the log never merges calls.
 * The active segment is open with O_DSYNC: a write returns once its bytes (and the file size) are
 * on disk, as write + fdatasync would, in one trip to libuv's thread pool instead of two.
 * A write that fails for want of space (ENOSPC, EDQUOT) is rolled back: the segment is cut back to
 * its last durable line and the append rejects with AppendRolledBack (nothing of the batch is
 * stored); the next append is taken as if it had never been. Any other failed write or fsync is
 * fatal for this instance (the caller restarts, and recovery cuts any torn tail), because after a
 * failed fsync nothing can be assumed about the file.
 * Opening runs the start-up scan (event-log-scan.ts); reads are the reader's (event-log-reader.ts).
 */
export class EventLog extends EventLogReader implements EventStore {
  private readonly segmentMaxBytes: number;
  private active: FileHandle | null = null;
  private onFatal: ((error: Error) => void) | undefined;
  private appendFlags = APPEND_DURABLY;
  private tail: Promise<unknown> = Promise.resolve();
  private failure: Error | null = null;
  private closed = false;
  /** The last segment takes no more appends: the next one starts a new segment (set when a compaction seals it). */
  private sealed = false;
  /** Counts redactions, so a compaction prepared meanwhile (from the lines before) is dropped. */
  private redactions = 0;
  private compacting: Promise<LogCompaction | null> | null = null;
  private autoCompact: EventLogOptions['autoCompact'];
  private onCompacted: EventLogOptions['onCompacted'];
  /** Purged ids whose content the start could not redact for want of space (see redactPending). */
  private unredacted: ReadonlySet<string> = new Set();

  private constructor(
    private readonly dir: string,
    private readonly logger: Logger,
    segments: Segment[],
    segmentMaxBytes: number,
    codec: EventCodec,
  ) {
    const last = segments.at(-1);
    super(segments, last ? lastSeqIn(last) : 0, codec);
    this.segmentMaxBytes = segmentMaxBytes;
  }

  /** Opens (or creates) the log, checks every line, cuts a torn last line, and heals pending purges. */
  static async open(options: EventLogOptions): Promise<EventLog> {
    mkdirSync(options.dir, { recursive: true });
    const { segments, purged } = scanEventLog(options.dir, options.logger, options.readOnly === true, options.codec);
    const log = new EventLog(options.dir, options.logger, segments, options.segmentMaxBytes ?? DEFAULT_SEGMENT_MAX_BYTES, options.codec);
    log.onFatal = options.onFatal;
    if (options.durable === false) log.appendFlags = APPEND;
    log.autoCompact = options.autoCompact;
    log.onCompacted = options.onCompacted;
    if (options.readOnly) {
      log.closed = true;
      return log;
    }
    // A crash between a purge's event and its redaction leaves content behind: finish the job.
    if (purged.size > 0) {
      await log.redact(purged).catch((error: unknown) => {
        if (!isOutOfSpace(error)) throw error;
        options.logger.warn({ err: error, ids: [...purged] }, 'no space to redact purged content in the event log yet; retried once space is freed');
        log.unredacted = purged;
      });
    }
    return log;
  }

  /** Redacts what the start had no space to (a no-op otherwise). */
  async redactPending(): Promise<void> {
    if (this.unredacted.size === 0) return;
    await this.redact(this.unredacted);
    this.unredacted = new Set();
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
      this.redactions += 1;
      let rewritten = 0;
      for (const segment of this.segments) {
        const isActive = segment === this.segments.at(-1);
        rewritten += await redactSegment(segment, ids, this.codec, async () => {
          if (isActive) await this.closeActive();
        });
      }
      if (rewritten > 0) this.logger.info({ ids: [...ids], lines: rewritten }, 'redacted purged content in the event log');
      return rewritten;
    });
  }

  /**
   * Sums the references of the log: seals the active segment, then rewrites the sealed segments from
   * the first that holds references not summed yet (merged with the compacted one before it while
   * that is small) into one, where each pool's references are one memory.referenced event with each
   * entry's count and last time (see event-log-compaction.ts). Every other line stays as it was; the
   * rewrite is a temp file, fsync, rename, and the segments it replaced are removed (one that a crash
   * leaves behind is removed at the next start). Appends go on meanwhile; a redaction meanwhile
   * drops the result (the next compaction redoes it). Resolves with what changed, or null.
   */
  compact(): Promise<LogCompaction | null> {
    this.compacting ??= this.compactOnce().finally(() => {
      this.compacting = null;
    });
    return this.compacting;
  }

  /** Bytes of the log, and of its memory.referenced lines that are not summed yet. */
  get size(): { readonly bytes: number; readonly referenceBytes: number } {
    let bytes = 0;
    let referenceBytes = 0;
    for (const segment of this.segments) {
      bytes += segment.size;
      referenceBytes += segment.referenceBytes;
    }
    return { bytes, referenceBytes };
  }

  /** Waits for the append in progress, then closes the file. Further appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
    await this.compacting?.catch(() => undefined);
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
    const lines = placed.map((event) => encodeEventLine(this.codec.toStored(event)));
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
      lines.forEach((line, index) => {
        const length = Buffer.byteLength(line);
        segment.offsets.push(offset);
        // A compacted segment (it has gaps) is the active one again after a restart: its lines name their seqs.
        segment.seqs?.push(firstSeq + index);
        if (placed[index]?.type === 'memory.referenced') segment.referenceBytes += length;
        offset += length;
      });
      segment.size = offset;
    } catch (error) {
      if (isOutOfSpace(error) && (await this.rollBack(error))) throw new AppendRolledBack(error as Error);
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.logger.fatal({ err: this.failure }, 'event log append failed; refusing further writes until restart');
      this.onFatal?.(this.failure);
      throw this.failure;
    }
    this.durableSeq = firstSeq + placed.length - 1;
    this.compactIfDue();
    return placed;
  }

  /** Starts a compaction when the references not summed yet weigh enough (see EventLogOptions.autoCompact). */
  private compactIfDue(): void {
    if (!this.autoCompact || this.compacting || this.closed || this.failure) return;
    const { bytes, referenceBytes } = this.size;
    const { minReferenceBytes, shareOfRest } = this.autoCompact;
    if (referenceBytes >= minReferenceBytes && referenceBytes >= shareOfRest * (bytes - referenceBytes)) {
      // Not awaited: the compaction waits for the append in progress to finish, and the writer must not wait for it.
      // References appended while it ran are not in it: they may be due already, and no append may come for a while.
      void this.compact()
        .then((compaction) => {
          if (compaction) this.compactIfDue();
        })
        .catch((error: unknown) => this.logger.error({ err: error }, 'compacting the event log failed; the next append retries'));
    }
  }

  private async compactOnce(): Promise<LogCompaction | null> {
    const plan = await this.serially(async () => {
      if (this.closed || this.failure) return null;
      const last = this.segments.at(-1);
      if (last && last.offsets.length > 0 && !this.sealed) {
        await this.closeActive();
        this.sealed = true;
      }
      const sealed = this.segments.filter((segment) => segment.offsets.length > 0 && (segment !== last || this.sealed));
      let start = sealed.findIndex((segment) => segment.referenceBytes > 0);
      if (start === -1) return null;
      const before = sealed[start - 1];
      if (before?.compacted && before.size < this.segmentMaxBytes / 2) start -= 1;
      return { group: sealed.slice(start), redactions: this.redactions };
    });
    if (!plan) return null;
    const { group } = plan;
    const bytesBefore = this.size.bytes;
    const result = await compactGroup(group, this.eventsAfter(0), this.codec);
    return this.serially(async () => {
      if (this.redactions !== plan.redactions || this.closed || this.failure) {
        rmSync(result.tempPath, { force: true });
        return null;
      }
      renameSync(result.tempPath, result.segment.path);
      for (const segment of group.slice(1)) rmSync(segment.path, { force: true });
      fsyncPath(this.dir);
      this.segments.splice(this.segments.indexOf(group[0] as Segment), group.length, result.segment);
      const compaction: LogCompaction = { removed: result.removed, summaries: result.summaries, bytesBefore, bytesAfter: this.size.bytes };
      this.logger.info(
        { segments: group.length, removed: compaction.removed.length, bytesBefore, bytesAfter: compaction.bytesAfter },
        'summed the references of the event log',
      );
      this.onCompacted?.(compaction);
      return compaction;
    });
  }

  /** Cuts the active segment back to its last durable line (which frees the space the batch took); false when that failed too. */
  private async rollBack(cause: unknown): Promise<boolean> {
    const segment = this.segments.at(-1);
    if (!segment) return true;
    try {
      await this.closeActive().catch(() => undefined);
      await truncate(segment.path, segment.size);
      fsyncPath(segment.path);
      this.logger.error(
        { err: cause, segment: segment.name },
        'the event log is out of space: refused the write and cut the segment back to its last durable line',
      );
      return true;
    } catch (error) {
      this.logger.error({ err: error }, 'could not cut the event log back after a write failed for want of space');
      return false;
    }
  }

  private async segmentFor(bytes: number, firstSeq: number): Promise<Segment> {
    const current = this.segments.at(-1);
    if (current && !this.sealed && (current.size === 0 || current.size + bytes <= this.segmentMaxBytes)) return current;
    await this.closeActive();
    this.sealed = false;
    const name = segmentName(firstSeq);
    const segment: Segment = { name, path: join(this.dir, name), firstSeq, offsets: [], size: 0, referenceBytes: 0, compacted: false };
    writeFileSync(segment.path, '', { flag: 'wx' });
    fsyncPath(this.dir);
    this.segments.push(segment);
    return segment;
  }

  private async activeHandle(segment: Segment): Promise<FileHandle> {
    if (!this.active) this.active = await open(segment.path, this.appendFlags);
    return this.active;
  }

  private async closeActive(): Promise<void> {
    const handle = this.active;
    this.active = null;
    if (handle) await handle.close();
  }
}
