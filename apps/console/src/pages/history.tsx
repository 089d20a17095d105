import { confidenceHistory, type MemoryEntry, type MemoryEvent } from '@engram/domain';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, historyOf } from '../api.js';
import { ConfidenceChart } from '../components/confidence-chart.js';
import { EventLine } from '../components/event-line.js';
import { when } from '../format.js';
import { href } from '../router.js';

/** One entry's life from the event log: who did what when, merges, and its decay curve. */
export function HistoryPage({ pool, id }: { pool: string; id: string }) {
  const [entry, setEntry] = useState<MemoryEntry | null | 'gone'>(null);
  const [events, setEvents] = useState<MemoryEvent[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setEntry(null);
    setEvents(null);
    api.memory(pool, id).then(setEntry, (failure: unknown) => {
      if (failure instanceof ApiError && failure.status === 404) setEntry('gone');
      else setError(String(failure));
    });
    historyOf(pool, id).then(setEvents, (failure: unknown) => setError(String(failure)));
  }, [pool, id]);
  if (error)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  if (entry === null || events === null) return <p aria-busy="true">Loading…</p>;
  const history = confidenceHistory(id, events, new Date());
  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">
        History of <code>{id}</code>
      </h1>
      {entry === 'gone' ? (
        <p class="note" data-testid="purged">
          This entry is gone: it was purged, so its content is no longer in the database, the flat files or the log.
        </p>
      ) : (
        <>
          <blockquote class="entry-content">{entry.content}</blockquote>
          <dl class="facts">
            <dt>Type and category</dt>
            <dd>
              {entry.type}, {entry.category ?? 'no category'}
            </dd>
            <dt>Stored confidence</dt>
            <dd>
              {entry.confidence.toFixed(2)}
              {entry.isConfirmed ? ' (confirmed by a person)' : ''}
            </dd>
            <dt>Used</dt>
            <dd>
              {entry.referenceCount} times, last {when(entry.lastReferenced)}
            </dd>
            <dt>State</dt>
            <dd>{entry.isArchived ? 'archived' : 'active'}</dd>
            {entry.supersedes.length > 0 && (
              <>
                <dt>Merged from</dt>
                <dd>
                  {entry.supersedes.map((other) => (
                    <a key={other} href={href({ page: 'history', pool, id: other })}>
                      <code>{other}</code>{' '}
                    </a>
                  ))}
                </dd>
              </>
            )}
            {entry.supersededBy && (
              <>
                <dt>Merged into</dt>
                <dd>
                  <a href={href({ page: 'history', pool, id: entry.supersededBy })}>
                    <code>{entry.supersededBy}</code>
                  </a>
                </dd>
              </>
            )}
          </dl>
          <h2>Effective confidence</h2>
          <ConfidenceChart history={history} />
        </>
      )}
      <h2>Timeline</h2>
      <ol class="timeline" aria-label="Events of this entry, oldest first">
        {events.map((event) => (
          <EventLine key={event.seq} event={event} pool={pool} focus={id} />
        ))}
      </ol>
    </section>
  );
}
