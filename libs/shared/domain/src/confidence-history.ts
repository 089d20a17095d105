import { ARCHIVE_THRESHOLD, effectiveConfidence } from './decay.js';
import { changesOf } from './evolve.js';
import type { MemoryEvent } from './events.js';
import type { MemoryEntry } from './memory-entry.js';

export interface ConfidencePoint {
  readonly at: string;
  readonly value: number;
}

export interface ConfidenceHistory {
  readonly points: readonly ConfidencePoint[];
  /** Where decay archives an entry (ARCHIVE_THRESHOLD), for drawing the line. */
  readonly archiveLine: number;
}

/**
 * One entry's effective confidence over time, replayed from its events (seq order): a point just
 * before and just after each event that changed it (a reference lifts the curve back up, a merge
 * starts a new one), and evenly spread samples in between so the decay curve shows, until `now`
 * or until the entry was purged. Events about other entries are ignored.
 */
export function confidenceHistory(id: string, events: readonly MemoryEvent[], now: Date, samples = 60): ConfidenceHistory {
  const states: { at: number; entry: MemoryEntry | undefined }[] = [];
  let current: MemoryEntry | undefined;
  for (const event of events) {
    const changes = changesOf(event, (other) => (other === id ? current : undefined));
    if (!changes.has(id)) continue;
    current = changes.get(id);
    states.push({ at: Date.parse(event.at), entry: current });
  }
  const first = states[0];
  if (!first) return { points: [], archiveLine: ARCHIVE_THRESHOLD };
  const purged = states.find((state) => state.entry === undefined);
  const end = purged ? purged.at : Math.max(now.getTime(), first.at);
  const points: { at: number; value: number }[] = [];
  const valueAt = (at: number): number | undefined => {
    let state: MemoryEntry | undefined;
    for (const candidate of states) {
      if (candidate.at > at) break;
      state = candidate.entry;
    }
    return state ? effectiveConfidence(state, new Date(at)) : undefined;
  };
  const add = (at: number, value: number | undefined): void => {
    if (value !== undefined) points.push({ at, value: round(value) });
  };
  for (let index = 0; index < states.length; index += 1) {
    const state = states[index];
    const previous = states[index - 1];
    if (!state) continue;
    if (previous?.entry) add(state.at, effectiveConfidence(previous.entry, new Date(state.at)));
    add(state.at, state.entry ? effectiveConfidence(state.entry, new Date(state.at)) : undefined);
  }
  const eventTimes = new Set(states.map((state) => state.at));
  const span = end - first.at;
  if (span > 0) {
    for (let step = 1; step <= samples; step += 1) {
      const at = first.at + (span * step) / samples;
      if (!eventTimes.has(at)) add(at, valueAt(at));
    }
  }
  points.sort((a, b) => a.at - b.at);
  return { points: points.map((point) => ({ at: new Date(point.at).toISOString(), value: point.value })), archiveLine: ARCHIVE_THRESHOLD };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
