import type { MemoryEvent } from '@engram/domain';
import { when } from '../format.js';
import { href } from '../router.js';

const VERBS: Readonly<Record<MemoryEvent['type'], string>> = {
  'memory.stored': 'stored',
  'memory.updated': 'edited',
  'memory.categorized': 'categorized',
  'memory.referenced': 'used',
  'memory.confirmed': 'confirmed',
  'memory.archived': 'archived',
  'memory.restored': 'restored',
  'memory.deleted': 'deleted (soft)',
  'memory.purged': 'purged',
  'memory.consolidated': 'merged',
};

/** One event: when, who (actor), what, the request or event that caused it, and what it said. */
export function EventLine({ event, pool, focus }: { event: MemoryEvent; pool: string; focus?: string }) {
  const data = event.data as {
    id?: string;
    ids?: readonly string[];
    content?: string;
    category?: string | null;
    reason?: string | null;
    confirmed?: boolean;
    supersedes?: readonly string[];
    model?: string;
    folds?: { events: number };
  };
  const verb = event.type === 'memory.confirmed' && data.confirmed === false ? 'unconfirmed' : VERBS[event.type];
  const ids = data.ids ?? (data.id ? [data.id] : []);
  return (
    <li class="event" data-type={event.type} data-seq={event.seq}>
      <time dateTime={event.at}>{when(event.at)}</time>
      <span class="actor" title="actor">
        {event.actor}
      </span>
      <strong>{verb}</strong>
      {ids.slice(0, 5).map((id) => (
        <a key={id} href={href({ page: 'history', pool, id })} class={id === focus ? 'self' : undefined}>
          <code>{id}</code>
        </a>
      ))}
      {ids.length > 5 && <span class="meta">+{ids.length - 5}</span>}
      {data.folds && <span class="meta">{data.folds.events} uses summed by compaction</span>}
      {data.content !== undefined && <q class="said">{data.content === '' ? '(content purged)' : data.content}</q>}
      {data.category !== undefined && event.type !== 'memory.stored' && <span class="meta">category {data.category ?? 'none'}</span>}
      {data.reason && <span class="meta">{data.reason}</span>}
      {data.supersedes && (
        <span class="meta">
          from {data.supersedes.join(', ')}
          {data.model ? ` by ${data.model}` : ''}
        </span>
      )}
      {event.causationId && (
        <span class="meta cause" title="request id or causing event">
          cause <code>{event.causationId}</code>
        </span>
      )}
    </li>
  );
}
