import type { MemoryEvent } from '@engram/domain';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { EventLine } from '../components/event-line.js';

const POLL_MS = 1500;
const SHOWN = 200;
/** How far back in the log (global seq) the first look goes. */
const LOOK_BACK = 2000;

/** The pool's recent events, newest first, polled so a person can watch memory change while they work. */
export function ActivityPage({ pool, lastSeq }: { pool: string; lastSeq: number }) {
  const [events, setEvents] = useState<MemoryEvent[]>([]);
  const [live, setLive] = useState(true);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!live) return;
    let after = Math.max(0, lastSeq - LOOK_BACK);
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setEvents([]);
    const poll = async (): Promise<void> => {
      try {
        let page = await api.events(pool, { after });
        for (;;) {
          if (stopped) return;
          const { data } = page;
          if (data.length > 0) {
            after = data.at(-1)!.seq;
            setEvents((previous) => [...data].reverse().concat(previous).slice(0, SHOWN));
          }
          if (!page.nextCursor) break;
          page = await api.events(pool, { cursor: page.nextCursor });
        }
        setError(null);
      } catch (failure) {
        setError(failure instanceof Error ? failure.message : String(failure));
      }
      if (!stopped) timer = setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [pool, live]);
  return (
    <section aria-labelledby="activity-title">
      <div class="heading">
        <h1 id="activity-title">Activity in {pool}</h1>
        <button type="button" aria-pressed={live} onClick={() => setLive(!live)}>
          {live ? 'Pause' : 'Resume'} live updates
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {events.length === 0 ? (
        <p class="note">No recent events. Talk to a tool through Engram and watch them arrive.</p>
      ) : (
        <ol class="timeline" aria-live="polite" aria-label="Recent events, newest first">
          {events.map((event) => (
            <EventLine key={event.seq} event={event} pool={pool} />
          ))}
        </ol>
      )}
    </section>
  );
}
