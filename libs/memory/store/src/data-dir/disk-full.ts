import { statfsSync } from 'node:fs';
import type { Logger } from 'pino';
import { MemoryError } from '@engram/contracts';
import { isOutOfSpace, messageOf } from './out-of-space.js';

/** What /readyz says while the data disk is full. */
export interface DiskFullState {
  /** When a write first failed for want of space. */
  readonly since: string;
  /** That failure, as the system said it (e.g. `ENOSPC: no space left on device, write`). */
  readonly error: string;
}

export interface DiskFullDeps {
  /** A folder on the data dir's file system, for its free space. */
  readonly dir: string;
  /** Brings the store back to what the log holds (database, flat files, pending redactions); throws while it cannot. */
  readonly heal: () => Promise<void>;
  readonly logger: Pick<Logger, 'error' | 'warn' | 'info'>;
  readonly clock: () => Date;
  /** First wait before a try to take writes again; doubled after each failed try, up to maxRetryMs. Default 1 s. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
}

/** Below this much free space, the heal is not even tried: it would only fail again. */
const MIN_FREE_BYTES = 64 * 1024;

/**
 * The data disk is full: the service takes no writes (each is refused as unavailable, nothing stored)
 * and keeps serving reads, instead of exiting and restarting in a loop on the same full disk. It
 * tries to heal in the background (once the file system has room again): the database catches up
 * with the log, the flat files are rendered, purges finish their redaction; then writes are taken again.
 */
export class DiskFull {
  private state: DiskFullState | null = null;
  private timer: NodeJS.Timeout | null = null;
  private wait: number;
  private closed = false;

  constructor(private readonly deps: DiskFullDeps) {
    this.wait = deps.retryMs ?? 1000;
  }

  /** Null while writes are taken. */
  get current(): DiskFullState | null {
    return this.state;
  }

  /** A write failed for want of space: refuse writes until healed. */
  enter(error: unknown): void {
    if (this.state || this.closed) return;
    const message = messageOf(error);
    this.state = { since: this.deps.clock().toISOString(), error: message };
    this.deps.logger.error({ err: error }, 'the data disk is full: memory takes no writes (reads go on) until space is freed');
    this.wait = this.deps.retryMs ?? 1000;
    this.schedule();
  }

  /** The answer to a write while the disk is full; null when writes are taken. */
  refusal(): MemoryError | null {
    if (!this.state) return null;
    return new MemoryError(
      'unavailable',
      `the data disk is full (since ${this.state.since}: ${this.state.error}): memory takes no writes until space is freed; nothing was stored`,
    );
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.tryHeal(), this.wait);
    this.timer.unref();
  }

  private async tryHeal(): Promise<void> {
    this.timer = null;
    if (!this.state || this.closed) return;
    try {
      if (freeBytes(this.deps.dir) >= MIN_FREE_BYTES) {
        await this.deps.heal();
        this.deps.logger.info({ since: this.state.since }, 'space is back on the data disk: memory takes writes again');
        this.state = null;
        return;
      }
    } catch (error) {
      if (!isOutOfSpace(error)) this.deps.logger.error({ err: error }, 'could not take writes again after the disk was full; trying again');
    }
    this.wait = Math.min(this.wait * 2, this.deps.maxRetryMs ?? 10_000);
    this.schedule();
  }
}

function freeBytes(dir: string): number {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return Number.POSITIVE_INFINITY; // cannot tell: let the heal itself find out
  }
}
