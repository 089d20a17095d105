import type { Category, MemoryEntry, MemorySource, MemoryType } from '../memory-entry.js';
import type { NewEvent } from '../events.js';
import { WriteRejection, newEvent, type WriteContext } from './write-command.js';

export interface StoreCommand {
  readonly context: WriteContext;
  /** The id the caller chose (or derived from its idempotency key); a store under it again is a retry. */
  readonly chosenId: string | undefined;
  /** An unused id for the new entry when none was chosen. */
  readonly freshId: () => string;
  readonly type: MemoryType;
  readonly category: Category | null;
  readonly content: string;
  readonly confidence: number;
  readonly source: MemorySource;
  /** Answer an active entry of the pool that already says this instead of storing a copy. */
  readonly dedupe: boolean;
}

export interface StoreState {
  /** The entry under the chosen id, in any pool. */
  readonly atChosenId: MemoryEntry | undefined;
  /** With dedupe: the active entry of the pool that already says the content (see existingFact). */
  readonly sameFact: MemoryEntry | null;
}

export type StoreDecision =
  /** The chosen id is already stored in this pool: a retry, nothing to write; answer that entry. */
  | { readonly outcome: 'retried'; readonly id: string; readonly events: readonly [] }
  /** Said again: a reference to the existing entry (it restarts decay) instead of a copy. */
  | { readonly outcome: 'said-again'; readonly id: string; readonly events: readonly [NewEvent] }
  | { readonly outcome: 'stored'; readonly id: string; readonly events: readonly [NewEvent] };

export function decideStore(command: StoreCommand, state: StoreState): StoreDecision {
  const { context, chosenId } = command;
  if (chosenId !== undefined && state.atChosenId) {
    if (state.atChosenId.pool !== context.pool) throw new WriteRejection('conflict', `id ${chosenId} is taken by another pool`);
    return { outcome: 'retried', id: chosenId, events: [] };
  }
  if (command.dedupe && state.sameFact) {
    // A confirmed entry stays confirmed: a reference changes neither its content nor its flags.
    const id = state.sameFact.id;
    return { outcome: 'said-again', id, events: [newEvent(context, 'memory.referenced', { ids: [id] })] };
  }
  const id = chosenId ?? command.freshId();
  const { type, category, content, confidence, source } = command;
  return { outcome: 'stored', id, events: [newEvent(context, 'memory.stored', { id, type, category, content, confidence, source })] };
}
