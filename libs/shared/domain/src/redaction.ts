import type { MemoryEvent } from './events.js';

/**
 * What a purge leaves of an event in the log: the event with the content of these entries emptied,
 * or undefined when it carries none of their content (nothing to rewrite). Only the events that
 * write an entry's text carry content; the rest name ids and counters.
 */
export function redacted(event: MemoryEvent, ids: ReadonlySet<string>): MemoryEvent | undefined {
  switch (event.type) {
    case 'memory.stored':
      return ids.has(event.data.id) && event.data.content !== '' ? { ...event, data: { ...event.data, content: '' } } : undefined;
    case 'memory.consolidated':
      return ids.has(event.data.id) && event.data.content !== '' ? { ...event, data: { ...event.data, content: '' } } : undefined;
    case 'memory.updated':
      return ids.has(event.data.id) && event.data.content !== undefined && event.data.content !== ''
        ? { ...event, data: { ...event.data, content: '' } }
        : undefined;
    default:
      return undefined;
  }
}
