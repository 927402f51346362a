// The one HTML (and SVG/XML) text escaper: every character that could end an attribute value, quoted
// or not, or start a tag (the same set Handlebars escapes). A leaf module: it imports nothing, so the
// renderer, the web layer and the console can all use it without import cycles.

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
  '=': '&#61;',
};
const HTML_SPECIAL = /[&<>"'`=]/g;

export function escapeHtml(text: string): string {
  return text.replace(HTML_SPECIAL, (c) => HTML_ESCAPES[c] ?? c);
}
