import { existsSync, renameSync } from 'node:fs';
import pg from 'pg';
import type { Logger } from 'pino';
import { redactedUrl } from '@engram/config';
import { redacted, type MemoryEvent, type NewEvent } from '@engram/domain';
import { plainEventCodec, type EventCodec } from '../event-codec.js';
import { EventLog } from '../event-log.js';
import type { EventStore } from '../event-store.js';
import { EVENT_COLUMNS, eventOfRow, eventRow, EventRowCorruptError, storedOfRow, type EventRow } from './event-row.js';
import { migrateEventStore } from './postgres-migrations.js';
import { checkStoreEncryption } from './store-encryption.js';
import { VersionConflict } from './version-conflict.js';

export { VersionConflict } from './version-conflict.js';
export { EventStoreKeyError } from './store-encryption.js';

/** The channel a commit notifies (its payload: the last seq it wrote). */
const CHANNEL = 'engram_events';
/** Rows read per query when catching up. */
const PULL_ROWS = 5_000;
const SELECT_ROWS = `SELECT ${EVENT_COLUMNS.join(', ')} FROM events`;
const INSERT_ROWS =
  `INSERT INTO events (${EVENT_COLUMNS.join(', ')}) ` +
  'SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::boolean[], $9::text[], $10::text[])';

export interface PostgresEventStoreOptions {
  /** postgres://user:password@host:port/database (ENGRAM_EVENT_STORE). */
  readonly url: string;
  /** The replica's copy of the table, a file log in its data dir (its read model's log: reads, replay, verify). */
  readonly mirrorDir: string;
  readonly logger: Logger;
  readonly codec?: EventCodec;
  /** How often the replica asks for events it was not notified of (default 1 s). */
  readonly pollMs?: number;
  /** The copy refused further writes after a failed write or fsync: the process should restart. */
  readonly onFatal?: (error: Error) => void;
  /** Only check (verify): no schema migration, no follower, the copy is opened read-only. */
  readonly readOnly?: boolean;
}

/** Events another replica committed (or this one, when its answer was lost), copied and to be applied, in seq order. */
export type ForeignEvents = (events: readonly MemoryEvent[]) => void;

/**
 * The PostgreSQL-backed `EventStore` (ENGRAM_EVENT_STORE=postgres://…): the `events` table is the
 * source of truth, shared by every memory replica; each replica copies it, in seq order and with the
 * same seqs, into a file log in its own data dir, which answers the synchronous reads (event pages,
 * catch-up, replay, verify) exactly as in file mode.
 *
 * An append is one transaction: take the batch's seqs from the one-row `event_position` (its row
 * lock serialises inserting replicas, so seqs are gap-free and commit in order), insert every row
 * with one INSERT, notify, commit with synchronous_commit=on: resolved only once PostgreSQL has the
 * commit on disk. Each event takes the next version of its pool after the version this replica had
 * applied when the write was decided; unique (pool, version) refuses it if another replica wrote to
 * the pool meanwhile: the append catches up and rejects with VersionConflict (the service decides
 * again). Events other replicas committed reach this one by LISTEN/NOTIFY, by a poll as safety net,
 * and before each own batch that follows them; they are copied and handed to the `follow` listener.
 */
export class PostgresEventStore implements EventStore {
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Each pool's version as of the copy's last seq; filled on first use. */
  private readonly versions = new Map<string, number>();
  /** Counts catch-ups that brought events of other replicas; `poolEpochs` says the last one per pool. */
  private epoch = 0;
  private readonly poolEpochs = new Map<string, number>();
  /** The seq up to which events are copied and handed over (the listener has applied them). */
  private appliedSeq: number;
  private waiters: { readonly seq: number; readonly resolve: () => void }[] = [];
  private listener: ForeignEvents | null = null;
  private listenClient: pg.Client | null = null;
  private pollTimer: NodeJS.Timeout | undefined;
  private pulling: Promise<void> | null = null;
  private positionAsked: Promise<number> | null = null;
  private positionNext: Promise<number> | null = null;
  private unreachableSince: number | null = null;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly mirror: EventLog,
    private readonly options: PostgresEventStoreOptions,
    private readonly codec: EventCodec,
  ) {
    this.appliedSeq = mirror.lastSeq;
  }

  /**
   * Connects, creates or upgrades the schema, opens the copy (a damaged copy is moved aside and made
   * again from the table) and brings it up to the table.
   */
  static async open(options: PostgresEventStoreOptions): Promise<PostgresEventStore> {
    const codec = options.codec ?? plainEventCodec;
    const pool = new pg.Pool({ connectionString: options.url, max: 4, connectionTimeoutMillis: 3_000, idleTimeoutMillis: 10_000 });
    // An idle connection PostgreSQL drops must not crash the process: the next query reconnects.
    pool.on('error', (error) => options.logger.warn({ err: error }, 'a PostgreSQL connection of the event store was closed'));
    try {
      if (!options.readOnly) {
        const client = await pool.connect();
        try {
          await migrateEventStore(client, options.logger);
        } finally {
          client.release();
        }
      }
      await checkStoreEncryption(pool, codec, options.url, !options.readOnly);
      const mirror = await openMirror(options);
      const store = new PostgresEventStore(pool, mirror, options, codec);
      await store.checkMirror();
      if (!options.readOnly) {
        let copied: number;
        do copied = await store.pullOnce(false);
        while (copied > 0);
      }
      options.logger.info({ store: redactedUrl(options.url), lastSeq: store.lastSeq }, 'event store: PostgreSQL, copied to the data dir');
      return store;
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  get lastSeq(): number {
    return this.mirror.lastSeq;
  }

  read(after: number, limit?: number, accept?: (event: MemoryEvent) => boolean): MemoryEvent[] {
    return this.mirror.read(after, limit, accept);
  }

  readSeqs(seqs: readonly number[]): MemoryEvent[] {
    return this.mirror.readSeqs(seqs);
  }

  eventsAfter(after: number): Iterable<MemoryEvent> {
    return this.mirror.eventsAfter(after);
  }

  append(batch: readonly NewEvent[], decided?: { readonly foreignEpoch: number }): Promise<MemoryEvent[]> {
    if (this.closed) return Promise.reject(new Error('event store is closed'));
    if (batch.length === 0) return Promise.resolve([]);
    return this.serially(() => {
      // A pull that ran while this batch waited its turn may have applied another replica's write to
      // its pools (the same fact, stored at once elsewhere): the decision is stale, so nothing is stored.
      const pools = decided ? new Set(batch.map((event) => event.pool)) : null;
      if (pools && decided && this.changedSince(pools, decided.foreignEpoch)) return Promise.reject(new VersionConflict([...pools]));
      return this.commit(batch);
    });
  }

  /**
   * Starts following the table: `listener` gets, in seq order, every event this replica copies that
   * it did not append itself (the caller applies them to its read model).
   */
  follow(listener: ForeignEvents): void {
    this.listener = listener;
    void this.listen();
    const pollMs = this.options.pollMs ?? 1_000;
    this.pollTimer = setInterval(() => {
      void this.poll();
    }, pollMs);
    this.pollTimer.unref();
  }

  /** A number that grows each time events of other replicas are applied (taken when a write is decided). */
  get foreignEpoch(): number {
    return this.epoch;
  }

  /** Whether events of another replica for one of these pools were applied after `epoch`: a decision made before is stale. */
  changedSince(pools: Iterable<string>, epoch: number): boolean {
    for (const pool of pools) if ((this.poolEpochs.get(pool) ?? 0) > epoch) return true;
    return false;
  }

  /**
   * Read-your-writes: resolves once this replica has applied everything the table held when asked
   * (so a write acknowledged by any replica before is visible), or after `timeoutMs`. Resolves false
   * when PostgreSQL does not answer or the copy did not get there in time: the caller reads what it has.
   */
  async caughtUp(timeoutMs: number): Promise<boolean> {
    // Known not to answer (the poll clears this once it does): no read waits for a connection attempt.
    if (this.unreachableSince !== null) {
      void this.poll();
      return false;
    }
    let target: number;
    try {
      target = await this.tablePosition();
    } catch (error) {
      this.noteUnreachable(error);
      return false;
    }
    if (this.appliedSeq >= target) return true;
    void this.poll();
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== entry);
        resolve(false);
      }, timeoutMs);
      const entry = {
        seq: target,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.waiters.push(entry);
    });
  }

  /**
   * The table's position, read by a query sent after this call: callers at once share one query, the
   * next one to be sent (one already on its way may have left before a write they must see was
   * acknowledged), so 64 concurrent writes cost two queries, not 64.
   */
  private tablePosition(): Promise<number> {
    if (!this.positionAsked) {
      this.positionAsked = this.pool
        .query<{ seq: string }>('SELECT seq FROM event_position')
        .then(({ rows }) => Number(rows[0]?.seq ?? 0))
        .finally(() => {
          this.positionAsked = null;
        });
      return this.positionAsked;
    }
    this.positionNext ??= this.positionAsked
      .catch(() => undefined)
      .then(() => {
        this.positionNext = null;
        return this.tablePosition();
      });
    return this.positionNext;
  }

  /** Redacts the rows carrying content of these ids (purge) in the table, then in this replica's copy. */
  redact(ids: ReadonlySet<string>): Promise<number> {
    return this.serially(async () => {
      const rewritten = await this.redactRows(ids);
      await this.mirror.redact(ids);
      if (rewritten > 0) this.options.logger.info({ ids: [...ids], rows: rewritten }, 'redacted purged content in the PostgreSQL event store');
      return rewritten;
    });
  }

  redactPending(): Promise<void> {
    return this.mirror.redactPending();
  }

  /** The highest seq whose jobs a replica handed to Redis (a new replica need not hand them again). */
  async dispatchedSeq(): Promise<number> {
    const { rows } = await this.pool.query<{ dispatched: string }>('SELECT dispatched FROM event_position');
    return Number(rows[0]?.dispatched ?? 0);
  }

  async noteDispatched(seq: number): Promise<void> {
    await this.pool.query('UPDATE event_position SET dispatched = GREATEST(dispatched, $1)', [seq]);
  }

  /** Every row of the table with seq > after, checked and opened, in order (verify, log copy). */
  async *rowsAfter(after: number): AsyncGenerator<MemoryEvent> {
    let from = after;
    for (;;) {
      const { rows } = await this.pool.query<EventRow>(`${SELECT_ROWS} WHERE seq > $1 ORDER BY seq LIMIT $2`, [from, PULL_ROWS]);
      for (const row of rows) {
        const event = eventOfRow(row, this.codec);
        if (event.seq !== from + 1) throw new EventRowCorruptError(event.seq, `expected seq ${from + 1} (a row is missing)`);
        from = event.seq;
        yield event;
      }
      if (rows.length < PULL_ROWS) return;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pollTimer);
    await this.serially(async () => undefined);
    const listening = this.listenClient;
    this.listenClient = null;
    await listening?.end().catch(() => undefined);
    for (const waiter of this.waiters) waiter.resolve();
    this.waiters = [];
    await this.mirror.close();
    await this.pool.end();
  }

  // ---- appends ----

  private async commit(batch: readonly NewEvent[]): Promise<MemoryEvent[]> {
    const next = new Map<string, number>();
    for (const event of batch) {
      if (!next.has(event.pool)) next.set(event.pool, await this.versionOf(event.pool));
    }
    const client = await this.pool.connect();
    // A connection cut while checked out emits 'error' on the client, not the pool: without a listener
    // that crashes the process (the query in flight rejects on its own and answers 503).
    const onError = (error: Error) => this.options.logger.warn({ err: error }, 'a PostgreSQL connection of the event store was cut during a write');
    client.on('error', onError);
    let placed: MemoryEvent[];
    let rows: { event: MemoryEvent; version: number }[];
    try {
      await client.query('BEGIN');
      try {
        // Explicit, whatever the server's default: COMMIT returns once the commit is flushed to disk.
        await client.query('SET LOCAL synchronous_commit = on');
        const { rows: position } = await client.query<{ seq: string }>('UPDATE event_position SET seq = seq + $1 RETURNING seq', [batch.length]);
        const firstSeq = Number(position[0]?.seq) - batch.length + 1;
        placed = batch.map((event, index) => ({ ...event, seq: firstSeq + index }) as MemoryEvent);
        rows = placed.map((event) => {
          const version = (next.get(event.pool) ?? 0) + 1;
          next.set(event.pool, version);
          return { event, version };
        });
        const encoded = rows.map(({ event, version }) => eventRow(event, version, this.codec));
        await client.query(
          INSERT_ROWS,
          EVENT_COLUMNS.map((column) => encoded.map((row) => row[column])),
        );
        await client.query('SELECT pg_notify($1, $2)', [CHANNEL, String(firstSeq + batch.length - 1)]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    } catch (error) {
      client.off('error', onError);
      client.release(isConnectionError(error) ? (error as Error) : undefined);
      if (isUniqueViolation(error)) {
        // Another replica wrote to one of these pools since this one decided: catch up, then the service decides again.
        await this.pullLocked();
        throw new VersionConflict([...next.keys()]);
      }
      throw error;
    }
    client.off('error', onError);
    client.release();
    this.unreachableSince = null;
    const first = placed[0]?.seq ?? 0;
    // Events other replicas committed before this batch: copied and applied first, so the copy stays in seq order.
    while (this.mirror.lastSeq < first - 1) {
      if ((await this.pullOnce(true, first - 1)) === 0) throw new Error(`the event store has no rows between ${this.mirror.lastSeq} and ${first}`);
    }
    await this.copy(placed);
    for (const { event, version } of rows) this.versions.set(event.pool, version);
    this.advance(placed.at(-1)?.seq ?? this.appliedSeq);
    return placed;
  }

  /** The pool's version as of the copy's last seq. */
  private async versionOf(pool: string): Promise<number> {
    const known = this.versions.get(pool);
    if (known !== undefined) return known;
    const { rows } = await this.pool.query<{ version: string }>(
      'SELECT version FROM events WHERE pool = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1',
      [pool, this.mirror.lastSeq],
    );
    const version = Number(rows[0]?.version ?? 0);
    this.versions.set(pool, version);
    return version;
  }

  // ---- following the table ----

  private async listen(): Promise<void> {
    if (this.closed || this.listenClient) return;
    const client = new pg.Client({ connectionString: this.options.url, connectionTimeoutMillis: 3_000 });
    const drop = () => {
      if (this.listenClient === client) this.listenClient = null;
      void client.end().catch(() => undefined);
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (message) => {
      if (Number(message.payload) > this.mirror.lastSeq) void this.poll();
    });
    this.listenClient = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      drop();
      this.noteUnreachable(error);
    }
  }

  /** Copies what the table holds past the copy (the safety net of LISTEN, and its reconnection). */
  private poll(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (!this.listenClient) void this.listen();
    this.pulling ??= this.serially(() => this.pullLocked())
      .catch((error: unknown) => this.noteUnreachable(error))
      .finally(() => {
        this.pulling = null;
      });
    return this.pulling;
  }

  /** Within the serial section: everything the table holds past the copy. */
  private async pullLocked(): Promise<void> {
    while ((await this.pullOnce(true)) > 0);
    this.unreachableSince = null;
  }

  /** Copies one page of rows past the copy (up to `upTo`); hands them to the listener when `handOver`. Returns how many. */
  private async pullOnce(handOver: boolean, upTo = Number.MAX_SAFE_INTEGER): Promise<number> {
    const after = this.mirror.lastSeq;
    const { rows } = await this.pool.query<EventRow>(`${SELECT_ROWS} WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3`, [after, upTo, PULL_ROWS]);
    if (rows.length === 0) return 0;
    const events = rows.map((row, index) => {
      const event = eventOfRow(row, this.codec);
      if (event.seq !== after + 1 + index) throw new EventRowCorruptError(event.seq, `expected seq ${after + 1 + index} (a row is missing)`);
      return event;
    });
    await this.copy(events);
    this.epoch += 1;
    const purged = new Set<string>();
    rows.forEach((row) => {
      this.versions.set(row.pool, Number(row.version));
      this.poolEpochs.set(row.pool, this.epoch);
    });
    for (const event of events) if (event.type === 'memory.purged') purged.add(event.data.id);
    // Copied before the purging replica redacted the table: the copy forgets the content too.
    if (purged.size > 0) await this.mirror.redact(purged);
    if (handOver) this.listener?.(events);
    this.advance(events.at(-1)?.seq ?? after);
    return events.length;
  }

  /** Appends events (seqs already given) to the copy, which gives the same seqs. */
  private async copy(events: readonly MemoryEvent[]): Promise<void> {
    const copied = await this.mirror.append(events.map(({ seq: _seq, ...event }) => event as NewEvent));
    if (copied[0]?.seq !== events[0]?.seq)
      throw new Error(`the data dir's copy of the event store is out of step (copied seq ${copied[0]?.seq} as ${events[0]?.seq})`);
  }

  private advance(seq: number): void {
    if (seq <= this.appliedSeq) return;
    this.appliedSeq = seq;
    const ready = this.waiters.filter((waiter) => waiter.seq <= seq);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => waiter.seq > seq);
    for (const waiter of ready) waiter.resolve();
  }

  /** The copy must be a prefix of the table: its last event is the table's row at that seq. */
  private async checkMirror(): Promise<void> {
    const last = this.mirror.lastSeq;
    if (last === 0) return;
    const { rows } = await this.pool.query<EventRow>(`${SELECT_ROWS} WHERE seq = $1`, [last]);
    const row = rows[0];
    const [mine] = this.mirror.readSeqs([last]);
    if (!row || storedOfRow(row).id !== mine?.id) {
      throw new Error(
        `this data dir holds events up to seq ${last} that the event store ${redactedUrl(this.options.url)} does not have ` +
          '(another database, or one restored to an earlier point): start this replica on an empty data dir, which builds itself from the table',
      );
    }
  }

  // ---- purge ----

  private async redactRows(ids: ReadonlySet<string>): Promise<number> {
    const patterns = [...ids].map((id) => `%${id.replaceAll('\\', '\\\\').replaceAll('%', '\\%').replaceAll('_', '\\_')}%`);
    // A sealed body cannot be searched: every sealed row is opened (purges are rare).
    const { rows } = await this.pool.query<EventRow & { version: string }>(`${SELECT_ROWS} WHERE sealed OR body LIKE ANY($1::text[]) ORDER BY seq`, [
      patterns,
    ]);
    let rewritten = 0;
    for (const row of rows) {
      const event = eventOfRow(row, this.codec);
      const changed = redacted(event, ids);
      if (!changed) continue;
      const next = eventRow(changed, Number(row.version), this.codec);
      await this.pool.query('UPDATE events SET envelope = $2, sealed = $3, body = $4, crc = $5 WHERE seq = $1', [
        next.seq,
        next.envelope,
        next.sealed,
        next.body,
        next.crc,
      ]);
      rewritten += 1;
    }
    return rewritten;
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private noteUnreachable(error: unknown): void {
    if (this.closed) return;
    if (this.unreachableSince === null) {
      this.unreachableSince = Date.now();
      this.options.logger.warn({ err: error }, 'the PostgreSQL event store does not answer: this replica serves what it has and retries');
    }
  }
}

async function openMirror(options: PostgresEventStoreOptions): Promise<EventLog> {
  const open = () =>
    EventLog.open({
      dir: options.mirrorDir,
      logger: options.logger,
      codec: options.codec ?? plainEventCodec,
      // Not flushed to disk append by append: the table is the source of truth, a write is acknowledged
      // once PostgreSQL committed it, and a tail of the copy lost with the machine's power is copied again
      // at start (pulled before the read model opens, which may have applied it: checkMirror only asks
      // that the copy be a prefix of the table), a damaged one made again below.
      durable: false,
      ...(options.readOnly ? { readOnly: true } : {}),
      ...(options.onFatal ? { onFatal: options.onFatal } : {}),
    });
  try {
    return await open();
  } catch (error) {
    if (options.readOnly || !existsSync(options.mirrorDir)) throw error;
    // Only a copy: the table has every event, so a damaged copy is set aside and made again.
    const aside = `${options.mirrorDir}.damaged-${Date.now()}`;
    renameSync(options.mirrorDir, aside);
    options.logger.warn({ err: error, movedTo: aside }, "the data dir's copy of the event store is damaged: moved aside, copying the table again");
    return open();
  }
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown }).code === '23505';
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || code.startsWith('08') || code.startsWith('57');
}
