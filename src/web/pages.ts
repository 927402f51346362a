// Server-rendered pages: Handlebars templates under templates/pages/, compiled once, one layout,
// HTML escaping on ({{ }} everywhere; the layout's {{{body}}} is the only unescaped slot).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';

export const PAGES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'templates', 'pages');

export const SITE_NAME = 'Paper Digest';

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

export interface PageData {
  /** <title> and, by convention, the page's h1. */
  title: string;
  [key: string]: unknown;
}

export interface Pages {
  render(name: string, data: PageData): string;
}

export function hourLabel(h: number): string {
  return `${String(h).padStart(2, '0')}:00`;
}

export function weekdayName(d: number): string {
  return WEEKDAYS[d] ?? String(d);
}

/**
 * Compiles every template in `dir` (name = file name without .hbs); `layout.hbs` wraps the others.
 * `helpers`: more Handlebars helpers for these templates (the console's `when`).
 */
export function createPages(dir: string = PAGES_DIR, helpers: Record<string, Handlebars.HelperDelegate> = {}): Pages {
  const hb = Handlebars.create();
  for (const [name, fn] of Object.entries(helpers)) hb.registerHelper(name, fn);
  hb.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  hb.registerHelper('hourLabel', (h: number) => hourLabel(h));
  hb.registerHelper('weekdayName', (d: number) => weekdayName(d));
  hb.registerHelper('inc', (n: number) => n + 1);
  hb.registerHelper('includes', (list: unknown, v: unknown) => Array.isArray(list) && list.includes(v));

  const templates = new Map<string, Handlebars.TemplateDelegate>();
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.hbs')) continue;
    const source = readFileSync(join(dir, file), 'utf8');
    const name = file.slice(0, -'.hbs'.length);
    if (name.startsWith('_')) hb.registerPartial(name.slice(1), source);
    else templates.set(name, hb.compile(source, { strict: false }));
  }
  const layout = templates.get('layout');
  if (!layout) throw new Error(`templates/pages/layout.hbs is missing in ${dir}`);

  return {
    render(name, data) {
      const page = templates.get(name);
      if (!page) throw new Error(`No page template "${name}" in ${dir}`);
      return layout({ siteName: SITE_NAME, ...data, body: page(data) });
    },
  };
}
