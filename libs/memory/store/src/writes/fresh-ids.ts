/** Ids drawn and checked against the database per refill. */
const REFILL = 256;

/**
 * New memory ids, known to be unused. Ids are random, so a clash with a stored entry is all but
 * impossible, but it must still be ruled out; one existence query per id would cost a SQLite read
 * transaction (a few file-lock system calls) on every store. Instead, ids are drawn in batches and
 * checked with one query per batch. An id can only become used afterwards by a write that names it:
 * the caller rules out ids in flight, and `noteUsed` drops ids as their writes are applied.
 */
export class FreshIds {
  private unused = new Set<string>();

  constructor(
    private readonly newId: () => string,
    /** Those of the ids that are stored. */
    private readonly stored: (ids: readonly string[]) => ReadonlySet<string>,
  ) {}

  /** An id neither stored nor `inFlight`, and never handed out before. */
  take(inFlight: (id: string) => boolean): string {
    for (;;) {
      if (this.unused.size === 0) this.refill();
      for (const id of this.unused) {
        this.unused.delete(id);
        if (!inFlight(id)) return id;
      }
    }
  }

  /** An applied write stored this id. */
  noteUsed(id: string): void {
    this.unused.delete(id);
  }

  private refill(): void {
    const drawn = Array.from({ length: REFILL }, () => this.newId());
    const stored = this.stored(drawn);
    this.unused = new Set(drawn.filter((id) => !stored.has(id)));
  }
}
