/** The log's files: NDJSON segments named by the seq of their first line. */
export const SEGMENT_PATTERN = /^(\d{16})\.ndjson$/;

/** Left beside a segment while a redaction rewrites it; a leftover one is an interrupted rewrite. */
export const REDACTION_TEMP_SUFFIX = '.redact-tmp';

/** Left beside the first segment of a compaction while it is written (event-log-compaction.ts). */
export const COMPACTION_TEMP_SUFFIX = '.compact-tmp';

export interface Segment {
  readonly name: string;
  readonly path: string;
  readonly firstSeq: number;
  /** Byte offset of each line. */
  offsets: number[];
  /**
   * The seq of each line, in a segment with gaps (references compaction summed into one event);
   * absent when line i holds seq firstSeq + i.
   */
  seqs?: number[];
  size: number;
  /** Bytes of its memory.referenced lines that compaction has not summed yet. */
  referenceBytes: number;
  /** Holds events compaction wrote (summed references). */
  compacted: boolean;
}

export function segmentName(firstSeq: number): string {
  return `${String(firstSeq).padStart(16, '0')}.ndjson`;
}

/** Seq of the segment's last line (firstSeq - 1 when it has none). */
export function lastSeqIn(segment: Segment): number {
  if (segment.seqs) return segment.seqs.at(-1) ?? segment.firstSeq - 1;
  return segment.firstSeq + segment.offsets.length - 1;
}

/** Seq of the segment's line at this index. */
export function seqAt(segment: Segment, index: number): number {
  return segment.seqs ? (segment.seqs[index] ?? Number.NaN) : segment.firstSeq + index;
}

/** Index of the segment's first line with a seq >= `seq` (the number of lines when there is none). */
export function lineAtOrAfter(segment: Segment, seq: number): number {
  const { seqs } = segment;
  if (!seqs) return Math.min(segment.offsets.length, Math.max(0, seq - segment.firstSeq));
  let low = 0;
  let high = seqs.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((seqs[middle] ?? 0) < seq) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A complete line of the log is damaged: starting would silently lose or reorder events. */
export class EventLogCorruptError extends Error {
  override name = 'EventLogCorruptError';
  constructor(
    readonly segment: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`event log segment ${segment}, line ${line}: ${reason}; the log is damaged, refusing to start (see ops/RECOVERY.md)`);
  }
}
