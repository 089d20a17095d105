import type { Logger } from 'pino';
import type { Actor } from '@engram/domain';

export interface ReferenceGroup {
  readonly pool: string;
  readonly actor: Actor;
  readonly causationId: string | null;
  readonly ids: readonly string[];
}

/**
 * Searches record what they returned as memory.referenced events without waiting for an fsync:
 * references are collected here and written up to `delayMs` later, one event per pool, actor and
 * cause. The window is long enough that a busy service writes references about once a second, not
 * after every other search: each write is an fsync, a SQLite transaction and a pause of the event
 * loop that the searches behind it wait for, and a longer window also merges repeated references.
 * The cost of this choice: a crash within that window forgets those references (only decay timing,
 * never content). `flush()` writes whatever is pending (on close, and in tests).
 */
export class ReferenceBatcher {
  private pending = new Map<string, { group: Omit<ReferenceGroup, 'ids'>; ids: Set<string> }>();
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: (groups: readonly ReferenceGroup[]) => Promise<void>,
    private readonly logger: Logger,
    private readonly delayMs = 1_000,
  ) {}

  add(pool: string, ids: readonly string[], actor: Actor, causationId: string | null): void {
    if (ids.length === 0) return;
    const key = JSON.stringify([pool, actor, causationId]);
    const slot = this.pending.get(key) ?? { group: { pool, actor, causationId }, ids: new Set<string>() };
    for (const id of ids) slot.ids.add(id);
    this.pending.set(key, slot);
    this.timer ??= setTimeout(() => void this.flush(), this.delayMs);
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const groups = [...this.pending.values()].map(({ group, ids }) => ({ ...group, ids: [...ids] }));
    this.pending = new Map();
    if (groups.length > 0) {
      this.inFlight = this.inFlight
        .then(() => this.write(groups))
        .catch((error: unknown) => this.logger.error({ err: error }, 'could not record references of a search'));
    }
    return this.inFlight;
  }
}
