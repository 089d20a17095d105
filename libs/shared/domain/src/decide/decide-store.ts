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
  /** What purges (acknowledged or in flight) forbid of this store: its chosen id, its text in the pool. */
  readonly purged: { readonly chosenId: boolean; readonly text: boolean };
}

/** Sources that store what a conversation said (a model, a marker, extraction): a purge's text is refused to them. */
const FROM_CONVERSATION: ReadonlySet<MemorySource> = new Set(['llm', 'marker', 'extraction']);

export type StoreDecision =
  /** The chosen id is already stored in this pool: a retry, nothing to write; answer that entry. */
  | { readonly outcome: 'retried'; readonly id: string; readonly events: readonly [] }
  /** Said again: a reference to the existing entry (it restarts decay) instead of a copy. */
  | { readonly outcome: 'said-again'; readonly id: string; readonly events: readonly [NewEvent] }
  | { readonly outcome: 'stored'; readonly id: string; readonly events: readonly [NewEvent] };

export function decideStore(command: StoreCommand, state: StoreState): StoreDecision {
  const { context, chosenId } = command;
  // A purged id stays purged: a retry of the store that made it (an Idempotency-Key, a replayed tool
  // call, a re-run extraction) would bring the text back under the id the purge removed.
  if (chosenId !== undefined && state.purged.chosenId) {
    throw new WriteRejection('gone', `memory ${chosenId} was purged; store it again without the same idempotency key to make a new entry`);
  }
  // A conversation still in flight when the person purged what it said (a queued extraction, a
  // retried turn) must not store it again; a person may (source user).
  if (state.purged.text && FROM_CONVERSATION.has(command.source)) {
    throw new WriteRejection('gone', 'this text was purged from the pool; it is not stored again from a conversation');
  }
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
