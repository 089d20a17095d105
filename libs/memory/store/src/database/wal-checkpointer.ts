import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3-multiple-ciphers';

/**
 * The worker starts after this many commits of at least BUSY_COMMIT_EVENTS events each: batches that
 * large mean many writers waiting on each commit, where a checkpoint stall costs them all. A lone
 * writer's commits are small, SQLite's own checkpoints come rarely, and the worker's own fsyncs beside
 * the log's would cost it more than they save.
 */
const BUSY_COMMITS_BEFORE_WORKER = 50;
const BUSY_COMMIT_EVENTS = 16;
/** WAL pages after which the writer checkpoints by itself, should the worker fall behind. */
const WRITER_FALLBACK_PAGES = 10_000;

/**
 * Milliseconds between a commit and the checkpoint that follows it: the commits in between share it
 * (fewer fsyncs beside the log's, and pages changed again are copied once).
 */
const CHECKPOINT_DELAY_MS = 100;
/**
 * WAL pages past which the worker also asks for a RESTART checkpoint. PASSIVE checkpoints beside a
 * busy writer rarely catch the moment when the whole WAL is copied, and only then does the writer
 * start it over; RESTART waits for that moment (holding off the writer for the last few pages).
 */
const RESTART_PAGES = 4_096;

/** The worker: its own connection to the same database; a PASSIVE checkpoint shortly after being told of a commit. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true, timeout: 0 });
for (const pragma of workerData.keyPragmas) db.pragma(pragma);
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
let timer = null;
function checkpoint() {
  timer = null;
  let error = null;
  try {
    const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)');
    if (log > workerData.restartPages) db.pragma('wal_checkpoint(RESTART)');
  } catch (caught) {
    error = String(caught);
  }
  parentPort.postMessage(error);
}
parentPort.on('message', (message) => {
  if (message === 'stop') {
    // Always a last one: an earlier PASSIVE checkpoint that ran beside a commit may have copied only part of the WAL.
    if (timer) clearTimeout(timer);
    checkpoint();
    db.close();
    parentPort.close();
  } else {
    timer ??= setTimeout(checkpoint, workerData.delay);
  }
});
`;

/**
 * Copies the WAL back into the database file on a worker thread instead of inside the writer's
 * commits. A checkpoint reads and writes megabytes and fsyncs both files; in the writer it stalls
 * every few commits for milliseconds, during which no write is acknowledged. SQLite lets a PASSIVE
 * checkpoint run on another connection beside the writer; the writer restarts the WAL from its
 * start once a checkpoint has copied all of it. The worker starts only once the writer is busy (a
 * quiet service, or a lone writer, keeps SQLite's own checkpoints); the writer then keeps a far
 * automatic checkpoint of its own as a bound on the WAL should the worker ever fall behind.
 */
export class WalCheckpointer {
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();
  private failed = false;
  private busyCommits = 0;
  /** Told the worker of a commit it has not checkpointed yet. */
  private told = false;
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly writer: Database.Database,
    private readonly path: string,
    private readonly onError: (error: string) => void,
    /** How the worker's connection is keyed (database.ts keyPragmas): none for a plaintext file. */
    private readonly keyPragmas: readonly string[] = [],
  ) {}

  /** After each commit of the writer, with the number of events it applied. */
  noteCommit(events: number): void {
    if (this.stopped || this.failed) return;
    if (!this.worker && events >= BUSY_COMMIT_EVENTS && ++this.busyCommits >= BUSY_COMMITS_BEFORE_WORKER) this.worker = this.startWorker();
    const worker = this.worker;
    if (!worker || this.told) return;
    this.told = true;
    worker.postMessage('commit');
  }

  /** Ends the worker, which first runs the checkpoint it owes, then closes its connection. */
  stop(): Promise<void> {
    const worker = this.worker;
    if (!this.stopped) {
      if (worker && !this.failed) {
        worker.ref(); // keep the process alive until the connection is closed
        worker.postMessage('stop');
      }
      this.stopped = this.exited;
    }
    return this.stopped;
  }

  private startWorker(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3-multiple-ciphers');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path: this.path, keyPragmas: this.keyPragmas, driver, delay: CHECKPOINT_DELAY_MS, restartPages: RESTART_PAGES },
    });
    worker.unref();
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (error: string | null) => {
      this.told = false;
      if (error !== null) this.onError(error);
    });
    worker.on('error', (error) => {
      // The worker is gone: the writer checkpoints by itself again, as SQLite does by default.
      this.failed = true;
      if (this.writer.open) this.writer.pragma('wal_autocheckpoint = 1000');
      this.onError(String(error));
    });
    this.writer.pragma(`wal_autocheckpoint = ${WRITER_FALLBACK_PAGES}`);
    return worker;
  }
}
