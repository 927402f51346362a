// A small SVG chart renderer for the console's overview: daily bars (stacked when several series) and a
// line for a running total, as inline <svg> in the server-rendered page. We wrote our own rather than
// serve a chart library: the console needs two chart shapes over at most 90 days, must load nothing
// from elsewhere (CSP: no scripts needed, no inline styles: colours are SVG attributes), and must render
// without JavaScript. Every label is escaped; each bar has a <title> (tooltip, screen readers).
import { escapeHtml } from '../html.ts';

export interface Series {
  name: string;
  values: number[];
  color: string;
}

export interface ChartInput {
  title: string;
  days: string[];
  series: Series[];
  kind: 'bars' | 'line';
}

/**
 * Two drawings of each chart: wide (720 units, scaled to the page) and narrow (360 units, drawn about
 * 1:1 on a phone; admin.css shows one or the other). One 720-unit drawing scaled to a 390 px screen had
 * 5 px labels.
 */
interface Size {
  w: number;
  h: number;
  font: number;
  /** The svg's class; the narrow drawing's bars and lines are classed apart so each drawing counts alone. */
  svgClass: string;
  bar: string;
  line: string;
}
const WIDE: Size = { w: 720, h: 160, font: 11, svgClass: 'chart', bar: 'bar', line: 'line' };
const NARROW: Size = { w: 360, h: 190, font: 12, svgClass: 'chart-sm', bar: 'bar-sm', line: 'line-sm' };
const PAD_B = 22;
const PAD_T = 10;

/** An axis number in a few characters: 950, 1.5k, 100k, 2.5M (a 6-digit label lost its first digit). */
export function axisLabel(v: number): string {
  const short = (x: number) => (x >= 10 ? String(Math.round(x)) : String(Math.round(x * 10) / 10));
  if (v >= 1e6) return `${short(v / 1e6)}M`;
  if (v >= 1e3) return `${short(v / 1e3)}k`;
  return String(v);
}


/** A round-ish maximum for the y axis: 1, 2, 5 × 10^k at or above the data's maximum. */
export function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export function renderChart(c: ChartInput): string {
  const legend = c.series
    .map((s) => `<span class="key"><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${s.color}"/></svg> ${escapeHtml(s.name)}</span>`)
    .join(' ');
  return `<figure class="chart-box"><figcaption>${escapeHtml(c.title)} <span class="legend">${legend}</span></figcaption>${drawChart(c, WIDE)}${drawChart(c, NARROW)}</figure>`;
}

function drawChart(c: ChartInput, size: Size): string {
  const { w: W, h: H, font } = size;
  const n = c.days.length;
  const totals = c.days.map((_, i) => c.series.reduce((sum, s) => sum + (c.kind === 'bars' ? (s.values[i] ?? 0) : 0), 0));
  const dataMax = c.kind === 'bars' ? Math.max(0, ...totals) : Math.max(0, ...c.series.flatMap((s) => s.values));
  const max = niceMax(dataMax);
  // Room for the longest y label at this font (about 0.62 em a digit), so none is cut at the left edge.
  const PAD_L = 10 + Math.ceil(font * 0.62 * axisLabel(max).length);
  const plotW = W - PAD_L - 4;
  const plotH = H - PAD_B - PAD_T;
  const step = n > 0 ? plotW / n : plotW;
  const y = (v: number) => PAD_T + plotH - (v / max) * plotH;
  const sum = c.series.reduce((a, s) => a + s.values.reduce((x, v) => x + v, 0), 0);
  const parts: string[] = [];
  parts.push(
    `<svg class="${size.svgClass}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeHtml(c.title)}" data-points="${n}" data-max="${dataMax}" data-sum="${sum}">`,
    `<title>${escapeHtml(c.title)}</title>`,
    `<line x1="${PAD_L}" y1="${y(0)}" x2="${W - 4}" y2="${y(0)}" stroke="#c9d0d6"/>`,
    `<line x1="${PAD_L}" y1="${y(max)}" x2="${W - 4}" y2="${y(max)}" stroke="#eef1f4"/>`,
    `<text x="${PAD_L - 6}" y="${y(max) + 4}" text-anchor="end" font-size="${font}" fill="#555d66">${axisLabel(max)}</text>`,
    `<text x="${PAD_L - 6}" y="${y(0)}" text-anchor="end" font-size="${font}" fill="#555d66">0</text>`,
  );
  if (n > 0) {
    parts.push(
      `<text x="${PAD_L}" y="${H - 6}" font-size="${font}" fill="#555d66">${escapeHtml(c.days[0]!)}</text>`,
      `<text x="${W - 4}" y="${H - 6}" text-anchor="end" font-size="${font}" fill="#555d66">${escapeHtml(c.days[n - 1]!)}</text>`,
    );
  }
  if (c.kind === 'bars') {
    const barW = Math.max(1, step * 0.8);
    c.days.forEach((day, i) => {
      let base = 0;
      for (const s of c.series) {
        const v = s.values[i] ?? 0;
        if (v <= 0) continue;
        const x = PAD_L + i * step + (step - barW) / 2;
        parts.push(
          `<rect class="${size.bar}" x="${x.toFixed(1)}" y="${y(base + v).toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(base) - y(base + v)).toFixed(1)}" fill="${s.color}"><title>${escapeHtml(`${day}: ${v} ${s.name}`)}</title></rect>`,
        );
        base += v;
      }
    });
  } else {
    for (const s of c.series) {
      const pts = s.values.map((v, i) => `${(PAD_L + i * step + step / 2).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
      parts.push(`<polyline class="${size.line}" points="${pts}" fill="none" stroke="${s.color}" stroke-width="2"><title>${escapeHtml(s.name)}</title></polyline>`);
      const last = s.values.length - 1;
      if (last >= 0) parts.push(`<text x="${W - 4}" y="${Math.max(12, y(s.values[last]!) - 4)}" text-anchor="end" font-size="${font}" fill="${s.color}">${s.values[last]}</text>`);
    }
  }
  parts.push('</svg>');
  return parts.join('');
}
