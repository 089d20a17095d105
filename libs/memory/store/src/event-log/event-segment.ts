/** The log's files: NDJSON segments named by the seq of their first line. */
export const SEGMENT_PATTERN = /^(\d{16})\.ndjson$/;

/** Left beside a segment while a redaction rewrites it; a leftover one is an interrupted rewrite. */
export const REDACTION_TEMP_SUFFIX = '.redact-tmp';

export interface Segment {
  readonly name: string;
  readonly path: string;
  readonly firstSeq: number;
  /** Byte offset of each line: offsets[i] holds seq firstSeq + i. */
  offsets: number[];
  size: number;
}

export function segmentName(firstSeq: number): string {
  return `${String(firstSeq).padStart(16, '0')}.ndjson`;
}

/** Seq of the segment's last line (firstSeq - 1 when it has none). */
export function lastSeqIn(segment: Segment): number {
  return segment.firstSeq + segment.offsets.length - 1;
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
