// A bar chart of figures per UTC day, as inline SVG rendered on the server: no script, no library, no style attribute
// (colours come from the stylesheet's classes, which the page's CSP allows). Each bar carries its figure as a tooltip
// (`<title>`); the chart as a whole is an image with a text alternative, and the page shows the same figures as a table
// for whoever cannot see it.

/** One series: its name, the stylesheet class that colours it, and a value per day. */
export interface Series {
  name: string;
  className: string;
  values: readonly number[];
}

const WIDTH = 720;
const HEIGHT = 180;
const TOP = 12;
const BOTTOM = 24;
const LEFT = 48;

export function DayChart({ id, label, days, series }: { id: string; label: string; days: readonly string[]; series: readonly Series[] }) {
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = (WIDTH - LEFT) / Math.max(1, days.length);
  const bar = Math.max(1, (slot * 0.8) / series.length);
  const y = (value: number) => TOP + plotHeight - (value / max) * plotHeight;
  return (
    <figure class="chart">
      <svg id={id} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${id}-title`}>
        <title id={`${id}-title`}>{label}</title>
        <line class="axis" x1={LEFT} y1={TOP + plotHeight} x2={WIDTH} y2={TOP + plotHeight} />
        <text class="tick" x={LEFT - 6} y={TOP + 4} text-anchor="end">
          {String(max)}
        </text>
        <text class="tick" x={LEFT - 6} y={TOP + plotHeight} text-anchor="end">
          0
        </text>
        {days.map((day, i) =>
          series.map((s, j) => {
            const value = s.values[i] ?? 0;
            return value === 0 ? null : (
              <rect class={`bar ${s.className}`} x={LEFT + i * slot + slot * 0.1 + j * bar} y={y(value)} width={bar} height={TOP + plotHeight - y(value)}>
                <title>{`${day}: ${value} ${s.name}`}</title>
              </rect>
            );
          }),
        )}
        <text class="tick" x={LEFT} y={HEIGHT - 6}>
          {days[0] ?? ""}
        </text>
        <text class="tick" x={WIDTH} y={HEIGHT - 6} text-anchor="end">
          {days.at(-1) ?? ""}
        </text>
      </svg>
      <figcaption>
        {series.map((s) => (
          <span class="key">
            <span class={`swatch ${s.className}`} aria-hidden="true" />
            {s.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
