/** `unknown`: not called yet. `down`: its connection was refused or broke; calls go elsewhere until it answers a ping. */
export type ReplicaState = 'unknown' | 'up' | 'down';

export interface ReplicaHealth {
  /** host:port as configured. */
  readonly address: string;
  readonly state: ReplicaState;
  /** Since when it is in this state (ISO); null while unknown. */
  readonly since: string | null;
  /** What made it down; null otherwise. */
  readonly error: string | null;
}

interface Slot<T> {
  readonly replica: T;
  state: ReplicaState;
  since: number | null;
  error: string | null;
}

/**
 * Which memory replica a call goes to. Each pool has an order of its own over the replicas
 * (rendezvous hashing of pool and address), the same in every gateway and worker: a pool's calls
 * all reach one replica while it is up, and when it is down they move to the pool's next one, so
 * the pools of a lost replica spread over the others and come back when it does. Replicas marked
 * down come last, so a call still tries them when every replica is down (the marks may be stale).
 */
export class ReplicaSet<T extends { readonly address: string }> {
  private readonly slots: readonly Slot<T>[];

  constructor(
    replicas: readonly T[],
    private readonly now: () => number = Date.now,
  ) {
    if (replicas.length === 0) throw new Error('a replica set needs at least one replica');
    this.slots = replicas.map((replica) => ({ replica, state: 'unknown', since: null, error: null }));
  }

  get size(): number {
    return this.slots.length;
  }

  /** The replicas to try for a call about `pool` ('' for a call about no pool), best first. */
  order(pool: string): T[] {
    const ranked = this.slots
      .map((slot) => ({ slot, weight: rendezvousWeight(pool, slot.replica.address) }))
      .sort((a, b) => b.weight - a.weight);
    return [...ranked.filter(({ slot }) => slot.state !== 'down'), ...ranked.filter(({ slot }) => slot.state === 'down')].map(
      ({ slot }) => slot.replica,
    );
  }

  /** It answered (a result or an error of its own): it is up. True when it was down until now. */
  answered(replica: T): boolean {
    const slot = this.slotOf(replica);
    const wasDown = slot.state === 'down';
    if (slot.state !== 'up') Object.assign(slot, { state: 'up', since: this.now(), error: null });
    return wasDown;
  }

  /** Its connection was refused or broke. True when it was not down until now. */
  failed(replica: T, error: string): boolean {
    const slot = this.slotOf(replica);
    const wasDown = slot.state === 'down';
    if (!wasDown) Object.assign(slot, { state: 'down', since: this.now() });
    slot.error = error;
    return !wasDown;
  }

  all(): T[] {
    return this.slots.map((slot) => slot.replica);
  }

  down(): T[] {
    return this.slots.filter((slot) => slot.state === 'down').map((slot) => slot.replica);
  }

  health(): ReplicaHealth[] {
    return this.slots.map((slot) => ({
      address: slot.replica.address,
      state: slot.state,
      since: slot.since === null ? null : new Date(slot.since).toISOString(),
      error: slot.error,
    }));
  }

  private slotOf(replica: T): Slot<T> {
    const slot = this.slots.find((candidate) => candidate.replica === replica);
    if (!slot) throw new Error(`${replica.address} is not a replica of this set`);
    return slot;
  }
}

/** FNV-1a over pool and address, then a murmur3 finalizer: well spread, and the same in every process. */
function rendezvousWeight(pool: string, address: string): number {
  let hash = 0x811c9dc5;
  const text = `${pool}\n${address}`;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
