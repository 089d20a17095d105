import { readFileSync, writeFileSync } from 'node:fs';
import {
  changesOf,
  EVENT_SCHEMA_VERSION,
  referencesOf,
  type EventOf,
  type MemoryEntry,
  type MemoryEvent,
  type MemoryReferencedData,
} from '@engram/domain';
import type { EventCodec } from './event-codec.js';
import { decodeEventLine, encodeEventLine, isShortLine, openStored } from './event-line.js';
import { COMPACTION_TEMP_SUFFIX, lastSeqIn, type Segment } from './event-segment.js';
import type { RemovedEvent } from '../projection/event-index.js';
import { fsyncPath } from './fsync.js';

/** Events folded between two turns of the event loop, so a compaction never holds the writer's thread for long. */
const EVENTS_PER_TURN = 1_000;

export interface CompactedGroup {
  /** The group's segments as one, written to `tempPath` (fsync'd), to be renamed over the first. */
  readonly segment: Segment;
  readonly tempPath: string;
  /** Events the log no longer holds: references now summed into a later event. */
  readonly removed: readonly RemovedEvent[];
  /** The events compaction wrote, one per pool: each in place of that pool's last reference of the group. */
  readonly summaries: readonly EventOf<'memory.referenced'>[];
}

interface PoolSum {
  readonly references: Map<string, { count: number; at: string }>;
  from: number;
  events: number;
  last: EventOf<'memory.referenced'>;
}

/**
 * Sums the references of consecutive sealed segments (`group`): every other event stays as it was,
 * byte for byte (checksum included), except that a line written before lines were short is written
 * short (the same stored event, sealed body and all), and each pool's memory.referenced events become one, at the
 * place (seq) of the pool's last one, with each entry's count and last time (MemoryReferencedData).
 * Replaying the result gives the same entries as replaying the original: a reference changes only
 * its entry's count and time, nothing reads them, and only references that changed an entry when
 * they happened are summed (`events` gives the log from seq 1: the state they happened in).
 * Purge redaction is kept (a summary carries ids, never content). Summaries are stored through the
 * codec (sealed with a key); only the reference lines are opened. Writes the result beside the first
 * segment; the caller renames it in.
 */
export async function compactGroup(group: readonly Segment[], events: Iterable<MemoryEvent>, codec: EventCodec): Promise<CompactedGroup> {
  const first = group[0];
  if (!first) throw new Error('nothing to compact');
  const lastSeq = lastSeqIn(group.at(-1) as Segment);
  const entries = new Map<string, MemoryEntry>();
  const purged = new Set<string>();
  const sums = new Map<string, PoolSum>();
  let folded = 0;
  for (const event of events) {
    if (event.seq > lastSeq) break;
    const changes = changesOf(
      event,
      (id) => entries.get(id),
      (id) => purged.has(id),
    );
    if (event.type === 'memory.referenced' && event.seq >= first.firstSeq) sumInto(sums, event, changes.keys());
    for (const [id, entry] of changes) {
      if (entry) entries.set(id, entry);
      else entries.delete(id);
    }
    if (event.type === 'memory.purged') purged.add(event.data.id);
    if (++folded % EVENTS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
  }

  const lastOfPool = new Map([...sums].map(([pool, sum]) => [sum.last.seq, pool]));
  const removed: RemovedEvent[] = [];
  const summaries: EventOf<'memory.referenced'>[] = [];
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  const seqs: number[] = [];
  let size = 0;
  for (const segment of group) {
    const buffer = readFileSync(segment.path);
    segment.offsets.forEach((start, index) => {
      const end = segment.offsets[index + 1] ?? segment.size;
      let line = buffer.subarray(start, end);
      const decoded = decodeEventLine(line.toString('utf8', 0, line.length - 1));
      if (!decoded.ok) throw new Error(`${segment.name}: line ${index + 1} changed since start (${decoded.reason})`);
      const { stored } = decoded;
      if (stored.type === 'memory.referenced') {
        const opened = openStored(stored, codec);
        if (!opened.ok) throw new Error(`${segment.name}: line ${index + 1}: ${opened.reason}`);
        const event = opened.event as EventOf<'memory.referenced'>;
        const pool = lastOfPool.get(event.seq);
        const sum = pool === undefined ? undefined : sums.get(pool);
        if (!sum) {
          removed.push({ seq: event.seq, pool: event.pool, ids: event.data.ids });
          return;
        }
        const summary = summaryOf(sum);
        summaries.push(summary);
        line = Buffer.from(encodeEventLine(codec.toStored(summary)));
      } else if (!isShortLine(line)) {
        // Written before lines were short: the same event, shorter (a sealed body stays as it was).
        line = Buffer.from(encodeEventLine(stored));
      }
      offsets.push(size);
      seqs.push(stored.seq);
      parts.push(line);
      size += line.length;
    });
  }
  const tempPath = `${first.path}${COMPACTION_TEMP_SUFFIX}`;
  writeFileSync(tempPath, Buffer.concat(parts));
  fsyncPath(tempPath);
  const gapless = seqs.every((seq, index) => seq === first.firstSeq + index);
  const segment: Segment = {
    name: first.name,
    path: first.path,
    firstSeq: first.firstSeq,
    offsets,
    ...(gapless ? {} : { seqs }),
    size,
    referenceBytes: 0,
    compacted: true,
  };
  return { segment, tempPath, removed, summaries };
}

function sumInto(sums: Map<string, PoolSum>, event: EventOf<'memory.referenced'>, changed: Iterable<string>): void {
  const references = referencesOf(event);
  const sum = sums.get(event.pool) ?? { references: new Map(), from: event.seq, events: 0, last: event };
  for (const id of changed) {
    const reference = references.get(id);
    if (!reference) continue;
    const before = sum.references.get(id);
    sum.references.set(id, { count: (before?.count ?? 0) + reference.count, at: reference.at });
  }
  sum.from = Math.min(sum.from, event.data.folds?.from ?? event.seq);
  sum.events += event.data.folds?.events ?? 1;
  sum.last = event;
  sums.set(event.pool, sum);
}

function summaryOf(sum: PoolSum): EventOf<'memory.referenced'> {
  const ids = [...sum.references.keys()];
  const data: MemoryReferencedData = {
    ids,
    counts: ids.map((id) => sum.references.get(id)?.count ?? 0),
    lastAt: ids.map((id) => sum.references.get(id)?.at ?? sum.last.at),
    folds: { from: sum.from, events: sum.events },
  };
  const { last } = sum;
  return {
    type: 'memory.referenced',
    id: last.id,
    at: last.at,
    pool: last.pool,
    actor: 'system',
    causationId: null,
    schemaVersion: EVENT_SCHEMA_VERSION,
    data,
    seq: last.seq,
  };
}
