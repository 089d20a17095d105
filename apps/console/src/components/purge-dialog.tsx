import { useEffect, useRef } from 'preact/hooks';
import type { MemoryEntry } from '@engram/domain';

/** Purge is the one action that cannot be undone: a modal dialog says what it does before it happens. */
export function PurgeDialog({ entry, onCancel, onPurge }: { entry: MemoryEntry; onCancel: () => void; onPurge: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby="purge-title" aria-describedby="purge-text" onCancel={onCancel}>
      <h2 id="purge-title">Purge this entry for good?</h2>
      <blockquote>{entry.content}</blockquote>
      <p id="purge-text">
        Purging forgets it for real: the entry leaves the database and the flat files, and the event log is rewritten so its content is redacted there
        too. Its history keeps only that it existed. This cannot be undone; archive it instead to hide it and keep it restorable.
      </p>
      <div class="buttons">
        <button type="button" class="quiet" onClick={onCancel} autofocus>
          Cancel
        </button>
        <button type="button" class="danger" onClick={onPurge}>
          Purge and rewrite the log
        </button>
      </div>
    </dialog>
  );
}
