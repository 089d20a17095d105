import type { EventOf, MemoryEvent } from './events.js';
import type { MemoryEntry } from './memory-entry.js';

/** The state every projection of the log must agree with: entries by id, the ids purged, and the last applied seq. */
export interface MemoryState {
  readonly lastSeq: number;
  readonly entries: ReadonlyMap<string, MemoryEntry>;
  /** Ids a purge removed: an event that would create one of them again changes nothing. */
  readonly purged: ReadonlySet<string>;
}

export const INITIAL_MEMORY_STATE: MemoryState = { lastSeq: 0, entries: new Map(), purged: new Set() };

/** New versions of the entries an event touches; `undefined` means the entry is gone (purged). */
export type EntryChanges = ReadonlyMap<string, MemoryEntry | undefined>;

/** Ids of the entries an event may change: what a projection must load before applying it. */
export function affectedIds(event: MemoryEvent): readonly string[] {
  switch (event.type) {
    case 'memory.referenced':
      return event.data.ids;
    case 'memory.consolidated':
      return [event.data.id, ...event.data.supersedes];
    case 'memory.stored':
    case 'memory.updated':
    case 'memory.categorized':
    case 'memory.confirmed':
    case 'memory.archived':
    case 'memory.restored':
    case 'memory.deleted':
    case 'memory.purged':
      return [event.data.id];
    default:
      return assertNever(event);
  }
}

/**
 * The pure heart of the projection: given the entries an event touches (`lookup`) and the ids purged
 * so far (`wasPurged`), the changes it makes. Events about unknown ids, or ids of another pool, change
 * nothing, so a late reference to a purged entry is harmless, and so is a store under a purged id
 * (which a log written before purged ids were refused may hold, its content redacted): a purged id
 * stays purged. Both `evolve` and the SQLite projection apply exactly these changes.
 */
export function changesOf(
  event: MemoryEvent,
  lookup: (id: string) => MemoryEntry | undefined,
  wasPurged: (id: string) => boolean = () => false,
): EntryChanges {
  const changes = new Map<string, MemoryEntry | undefined>();
  const existing = (id: string): MemoryEntry | undefined => {
    const entry = changes.has(id) ? changes.get(id) : lookup(id);
    return entry && entry.pool === event.pool ? entry : undefined;
  };
  const change = (id: string, patch: (entry: MemoryEntry) => MemoryEntry): void => {
    const entry = existing(id);
    if (entry) changes.set(id, patch(entry));
  };

  switch (event.type) {
    case 'memory.stored':
      if (!lookup(event.data.id) && !wasPurged(event.data.id)) changes.set(event.data.id, storedEntry(event));
      break;
    case 'memory.updated': {
      const { content, category, type } = event.data;
      change(event.data.id, (entry) => ({
        ...entry,
        ...(content !== undefined ? { content } : {}),
        ...(category !== undefined ? { category } : {}),
        ...(type !== undefined ? { type } : {}),
        updatedAt: event.at,
      }));
      break;
    }
    case 'memory.categorized':
      change(event.data.id, (entry) => ({ ...entry, category: event.data.category, updatedAt: event.at }));
      break;
    case 'memory.referenced':
      referencesOf(event).forEach(({ count, at }, id) => {
        change(id, (entry) => ({ ...entry, lastReferenced: at, referenceCount: entry.referenceCount + count }));
      });
      break;
    case 'memory.confirmed':
      // A person vouching for an entry restores its full confidence; withdrawing it only clears the flag.
      change(event.data.id, (entry) => ({
        ...entry,
        isConfirmed: event.data.confirmed,
        confidence: event.data.confirmed ? 1 : entry.confidence,
        updatedAt: event.at,
      }));
      break;
    case 'memory.archived':
    case 'memory.deleted':
      change(event.data.id, (entry) => ({ ...entry, isArchived: true, updatedAt: event.at }));
      break;
    case 'memory.restored':
      change(event.data.id, (entry) => ({ ...entry, isArchived: false, supersededBy: null, updatedAt: event.at }));
      break;
    case 'memory.purged':
      if (existing(event.data.id)) changes.set(event.data.id, undefined);
      break;
    case 'memory.consolidated':
      if (lookup(event.data.id) || wasPurged(event.data.id)) break;
      changes.set(event.data.id, consolidatedEntry(event));
      for (const id of event.data.supersedes) {
        change(id, (entry) => ({ ...entry, isArchived: true, supersededBy: event.data.id, updatedAt: event.at }));
      }
      break;
    default:
      return assertNever(event);
  }
  return changes;
}

/**
 * What a memory.referenced event does to each id it names: one reference at the event's time, or,
 * in an event compaction summed (see MemoryReferencedData), that id's count and last time.
 */
export function referencesOf(event: EventOf<'memory.referenced'>): ReadonlyMap<string, { readonly count: number; readonly at: string }> {
  const { ids, counts, lastAt } = event.data;
  const references = new Map<string, { count: number; at: string }>();
  ids.forEach((id, index) => {
    if (!references.has(id)) references.set(id, { count: counts?.[index] ?? 1, at: lastAt?.[index] ?? event.at });
  });
  return references;
}

/** Applies one event to the state. Events at or below `lastSeq` change nothing: applying twice is harmless. */
export function evolve(state: MemoryState, event: MemoryEvent): MemoryState {
  if (event.seq <= state.lastSeq) return state;
  const changes = changesOf(
    event,
    (id) => state.entries.get(id),
    (id) => state.purged.has(id),
  );
  const purged = event.type === 'memory.purged' ? new Set([...state.purged, event.data.id]) : state.purged;
  if (changes.size === 0) return { lastSeq: event.seq, entries: state.entries, purged };
  const entries = new Map(state.entries);
  applyChanges(entries, changes);
  return { lastSeq: event.seq, entries, purged };
}

/** Folds a whole log in O(events) (evolve copies the map per event; a rebuild must not). */
export function replayEvents(events: Iterable<MemoryEvent>, from: MemoryState = INITIAL_MEMORY_STATE): MemoryState {
  const entries = new Map(from.entries);
  const purged = new Set(from.purged);
  let lastSeq = from.lastSeq;
  for (const event of events) {
    if (event.seq <= lastSeq) continue;
    applyChanges(
      entries,
      changesOf(
        event,
        (id) => entries.get(id),
        (id) => purged.has(id),
      ),
    );
    if (event.type === 'memory.purged') purged.add(event.data.id);
    lastSeq = event.seq;
  }
  return { lastSeq, entries, purged };
}

function applyChanges(entries: Map<string, MemoryEntry>, changes: EntryChanges): void {
  for (const [id, entry] of changes) {
    if (entry) entries.set(id, entry);
    else entries.delete(id);
  }
}

function storedEntry(event: EventOf<'memory.stored'>): MemoryEntry {
  return newEntry(event, event.data.source, []);
}

function consolidatedEntry(event: EventOf<'memory.consolidated'>): MemoryEntry {
  return newEntry(event, 'consolidation', [...event.data.supersedes]);
}

/** A fresh entry as either creating event describes it. */
function newEntry(
  event: EventOf<'memory.stored'> | EventOf<'memory.consolidated'>,
  source: MemoryEntry['source'],
  supersedes: readonly string[],
): MemoryEntry {
  const { data } = event;
  return {
    id: data.id,
    pool: event.pool,
    type: data.type,
    category: data.category,
    content: data.content,
    confidence: data.confidence,
    createdAt: event.at,
    updatedAt: event.at,
    lastReferenced: null,
    referenceCount: 0,
    isConfirmed: false,
    isArchived: false,
    source,
    supersededBy: null,
    supersedes,
  };
}

function assertNever(value: never): never {
  throw new Error(`unknown event type: ${JSON.stringify(value)}`);
}
