import type { ConfidenceHistory } from '@engram/domain';

const WIDTH = 600;
const HEIGHT = 180;
const PAD = { left: 34, right: 8, top: 10, bottom: 22 };

/** Effective confidence over time as an inline SVG line, with the archive line at 0.3. */
export function ConfidenceChart({ history }: { history: ConfidenceHistory }) {
  const points = history.points;
  if (points.length < 2) return <p class="note">Not enough history for a curve yet.</p>;
  const start = Date.parse(points[0]!.at);
  const end = Date.parse(points.at(-1)!.at);
  const span = Math.max(1, end - start);
  const x = (at: string) => PAD.left + ((Date.parse(at) - start) / span) * (WIDTH - PAD.left - PAD.right);
  const y = (value: number) => PAD.top + (1 - Math.min(1, Math.max(0, value))) * (HEIGHT - PAD.top - PAD.bottom);
  const path = points.map((point, index) => `${index === 0 ? 'M' : 'L'}${x(point.at).toFixed(1)},${y(point.value).toFixed(1)}`).join(' ');
  const last = points.at(-1)!;
  const days = Math.round(span / 86_400_000);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby="chart-title">
        <title id="chart-title">
          Effective confidence over {days} days, now {last.value.toFixed(2)}; entries below {history.archiveLine} are archived
        </title>
        {[0, 0.5, 1].map((tick) => (
          <g key={tick}>
            <line class="grid" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(tick)} y2={y(tick)} />
            <text class="axis" x={PAD.left - 6} y={y(tick) + 4} text-anchor="end">
              {tick.toFixed(1)}
            </text>
          </g>
        ))}
        <line class="threshold" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(history.archiveLine)} y2={y(history.archiveLine)} />
        <text class="axis threshold-label" x={WIDTH - PAD.right} y={y(history.archiveLine) - 4} text-anchor="end">
          archive line {history.archiveLine}
        </text>
        <path class="curve" d={path} />
        <text class="axis" x={PAD.left} y={HEIGHT - 6}>
          {points[0]!.at.slice(0, 10)}
        </text>
        <text class="axis" x={WIDTH - PAD.right} y={HEIGHT - 6} text-anchor="end">
          {last.at.slice(0, 10)}
        </text>
      </svg>
      <figcaption>Effective confidence = confidence × 0.95 per day unused (0.98 for decisions and gotchas); a reference resets the clock.</figcaption>
    </figure>
  );
}
