import { describe, expect, it } from 'vitest';
import { renderChart } from '../../src/admin/charts.ts';
import { escapeHtml } from '../../src/html.ts';
import { escapeHtml as renderEscape } from '../../src/render/render-format.ts';
import { segmentsToHtml } from '../../src/web/highlight-html.ts';

const HOSTILE = `<a href="x" onclick='y'>&=\``;
const ESCAPED = '&lt;a href&#61;&quot;x&quot; onclick&#61;&#39;y&#39;&gt;&amp;&#61;&#96;';

describe('one HTML escaper', () => {
  it('escapes the same characters in the email, the topic preview and the console charts', () => {
    expect(escapeHtml(HOSTILE)).toBe(ESCAPED);
    expect(renderEscape(HOSTILE)).toBe(ESCAPED);
    expect(segmentsToHtml([{ text: HOSTILE, hit: true }])).toBe(`<mark>${ESCAPED}</mark>`);
    expect(renderChart({ title: HOSTILE, days: ['2025-11-24'], kind: 'bars', series: [] })).toContain(`<title>${ESCAPED}</title>`);
  });
});
