import { changesOf, type EntryChanges, type MemoryEntry, type MemoryEvent, type NewEvent } from '@engram/domain';

interface Slot {
  entry: MemoryEntry | undefined;
  writes: number;
  /** Resolves when the last write of the id in flight is applied (or failed). */
  readonly landed: Promise<void>;
  readonly land: () => void;
}

/**
 * Entries as writes not yet applied will leave them, so the next command decides against them
 * (acknowledged state plus everything in flight), and a way to wait until an id has no write in
 * flight (a retried store answers once the first is applied).
 */
export class InFlightEntries {
  private readonly slots = new Map<string, Slot>();

  constructor(private readonly acknowledged: (id: string) => MemoryEntry | undefined) {}

  /** Acknowledged or in-flight state of an id. */
  current(id: string): MemoryEntry | undefined {
    const slot = this.slots.get(id);
    return slot ? slot.entry : this.acknowledged(id);
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  /**
   * Tracks the entries the events change, each event's changes computed once; returns the ids to
   * untrack when the write lands and the entries the events leave. `unused`: an id the caller has
   * just found to be neither stored nor in flight (not read again).
   */
  track(events: readonly NewEvent[], unused: string | undefined): { readonly ids: string[]; readonly changes: EntryChanges } {
    const ids: string[] = [];
    const all = new Map<string, MemoryEntry | undefined>();
    for (const event of events) {
      // A reference moves only the decay anchor and a counter, which no decision reads (at most a
      // consolidation's starting confidence misses a reference milliseconds old); tracking it would
      // cost a row read per id on every reference batch.
      if (event.type === 'memory.referenced') continue;
      const changes = changesOf({ ...event, seq: 0 } as MemoryEvent, (id) => (id === unused ? undefined : this.current(id)));
      for (const [id, entry] of changes) {
        const slot = this.slots.get(id) ?? this.newSlot(id);
        slot.entry = entry;
        slot.writes += 1;
        ids.push(id);
        all.set(id, entry);
      }
    }
    return { ids, changes: all };
  }

  /** The writes of these ids landed (applied, or failed): the acknowledged state speaks for them again. */
  untrack(ids: readonly string[]): void {
    for (const id of ids) {
      const slot = this.slots.get(id);
      if (!slot) continue;
      slot.writes -= 1;
      if (slot.writes > 0) continue;
      this.slots.delete(id);
      slot.land();
    }
  }

  /** Resolves once no write of the id is in flight (waiting for each in turn; never polls). */
  async settled(id: string): Promise<void> {
    for (let slot = this.slots.get(id); slot; slot = this.slots.get(id)) await slot.landed;
  }

  private newSlot(id: string): Slot {
    let land = (): void => undefined;
    const landed = new Promise<void>((resolve) => (land = resolve));
    const slot: Slot = { entry: undefined, writes: 0, landed, land };
    this.slots.set(id, slot);
    return slot;
  }
}
