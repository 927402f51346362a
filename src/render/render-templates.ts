// Loads the email and page templates and compiles them once: MJML -> HTML (at start-up only), then
// HTML/text -> Handlebars functions that the renderer fills per subscriber in microseconds.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';
import { AppError } from '../errors.ts';

/** templates/ at the repository root, found from this file's location. */
export const DEFAULT_TEMPLATES_DIR = fileURLToPath(new URL('../../templates/', import.meta.url));

/** The blocks in the digest templates: a paper in full, a paper in one compact line. */
const CARD_BLOCK = /\{\{#papers\}\}\n?([\s\S]*?)\{\{\/papers\}\}\n?/;
const COMPACT_BLOCK = /\{\{#compact\}\}\n?([\s\S]*?)\{\{\/compact\}\}\n?/;
/** What the blocks become in the shell: the cards, already encoded, go there (render/digest-email.ts). */
const CARDS_SLOT = '{{{cards}}}';
const COMPACT_SLOT = '{{{compact}}}';
/** The per-subscriber parts of a block. */
const READER_PART = /\{\{#reader\}\}([\s\S]*?)\{\{\/reader\}\}/g;

export type Fill = (view: object) => string;

/**
 * A card block cut at its {{#reader}} parts: `reader: false` pieces are the same for everyone who
 * gets the paper (filled and encoded once per run), `reader: true` ones are filled per subscriber.
 */
export type BlockPieces = Array<{
  reader: boolean;
  fill: Fill;
  /** A reader part that reads the paper or the root view: filled per reader (render/reader-shape.ts). */
  readsPaper: boolean;
}>;

/** Escapes a value for HTML exactly as the templates' `{{value}}` does (reader-shape.ts fills values itself). */
export const escapeValue: (value: string) => string = Handlebars.Utils.escapeExpression;

/** A reader part names the paper (`p`), the root view or a parent scope: its fill is not the same for every paper. */
const READS_PAPER = /\{\{[^}]*(?:p|@root|\.\.\/)/;

/** The card blocks' pieces: what the card cache and the reader shapes fill. */
export type CardBlocks = Pick<CompiledTemplates, 'fullHtml' | 'fullText' | 'compactHtml' | 'compactText'>;

export interface CompiledTemplates {
  digestShellHtml: Fill;
  /** The HTML shell's source after MJML (digest-shell.ts checks it writes no value unescaped). */
  digestShellSource: string;
  digestShellText: Fill;
  fullHtml: BlockPieces;
  fullText: BlockPieces;
  compactHtml: BlockPieces;
  compactText: BlockPieces;
  confirmHtml: Fill;
  confirmText: Fill;
  webPage: Fill;
}

/** The templates after MJML: what compileTemplateSources turns into fill functions. */
export interface TemplateSources {
  digestHtml: string;
  digestText: string;
  confirmHtml: string;
  confirmText: string;
  webPage: string;
}

/**
 * Reads and compiles every template in `dir`. Template mistakes (invalid MJML, Handlebars syntax,
 * a missing papers block) stop here with the file named, not in the middle of a send.
 */
export async function compileTemplates(dir: string = DEFAULT_TEMPLATES_DIR): Promise<CompiledTemplates> {
  return compileTemplateSources(await readTemplateSources(dir));
}

/**
 * MJML's output saved by `npm run build` (dist/templates.json, beside dist/render/): a compiled
 * service then never loads MJML, which costs ~86 MB of RSS that stays (measured: `digest serve` idle
 * 160 MB with MJML at start-up, see README). Keyed by a hash of the template files' contents, so a
 * template edited after the build is simply compiled again at start-up. From the sources (tests,
 * bin/digest-dev.js) the build's file is looked for in dist/: its key makes a stale one harmless, and
 * without it MJML runs as before (1.5-1.7 CPU s per test process that renders).
 */
export const TEMPLATE_CACHE_FILE = fileURLToPath(new URL('../templates.json', import.meta.url));
const BUILD_CACHE_FROM_SOURCES = fileURLToPath(new URL('../../dist/templates.json', import.meta.url));

const MJML_FILES = ['digest.mjml', 'confirm.mjml'] as const;

/** Reads the templates and runs MJML (the slow, memory-hungry part) unless the build's output matches. */
export async function readTemplateSources(dir: string = DEFAULT_TEMPLATES_DIR, cacheFile = TEMPLATE_CACHE_FILE): Promise<TemplateSources> {
  const [digestMjml, confirmMjml] = await Promise.all(MJML_FILES.map((f) => readTemplate(dir, f)));
  const key = mjmlKey([digestMjml!, confirmMjml!]);
  const cached = await readMatchingCache(key, cacheFile === TEMPLATE_CACHE_FILE ? [cacheFile, BUILD_CACHE_FROM_SOURCES] : [cacheFile]);
  const html =
    cached?.key === key
      ? cached
      : { digestHtml: await mjmlToHtml(dir, 'digest.mjml', digestMjml!), confirmHtml: await mjmlToHtml(dir, 'confirm.mjml', confirmMjml!) };
  return {
    digestHtml: html.digestHtml,
    digestText: await readTemplate(dir, 'digest.txt.hbs'),
    confirmHtml: html.confirmHtml,
    confirmText: await readTemplate(dir, 'confirm.txt.hbs'),
    webPage: await readTemplate(dir, 'digest-web.hbs'),
  };
}

interface MjmlCache {
  key: string;
  digestHtml: string;
  confirmHtml: string;
}

function mjmlKey(sources: string[]): string {
  const h = createHash('sha256');
  for (const s of sources) h.update(s).update('\u0000');
  return h.digest('hex');
}

async function readMatchingCache(key: string, files: string[]): Promise<MjmlCache | undefined> {
  for (const file of files) {
    const c = await readCache(file);
    if (c?.key === key) return c;
  }
  return undefined;
}

async function readCache(file: string): Promise<MjmlCache | undefined> {
  try {
    const c = JSON.parse(await readFile(file, 'utf8')) as Partial<MjmlCache>;
    return typeof c.key === 'string' && typeof c.digestHtml === 'string' && typeof c.confirmHtml === 'string' ? (c as MjmlCache) : undefined;
  } catch {
    return undefined; // no build output (running from the sources) or unreadable: MJML runs
  }
}

/** `npm run build`'s last step: runs MJML once and saves its output beside the compiled code. */
export async function writeTemplateCache(dir: string = DEFAULT_TEMPLATES_DIR, cacheFile = TEMPLATE_CACHE_FILE): Promise<void> {
  const [digestMjml, confirmMjml] = await Promise.all(MJML_FILES.map((f) => readTemplate(dir, f)));
  const cache: MjmlCache = {
    key: mjmlKey([digestMjml!, confirmMjml!]),
    digestHtml: await mjmlToHtml(dir, 'digest.mjml', digestMjml!),
    confirmHtml: await mjmlToHtml(dir, 'confirm.mjml', confirmMjml!),
  };
  const { writeFile } = await import('node:fs/promises');
  await writeFile(cacheFile, JSON.stringify(cache));
}

/** Handlebars over sources already through MJML: cheap, and needs no MJML (worker threads use this). */
export function compileTemplateSources(sources: TemplateSources): CompiledTemplates {
  // An isolated Handlebars environment: no global helpers or partials shared with anyone else.
  const hbs = Handlebars.create();
  const html = (source: string, file: string): Fill => compileFill(hbs, source, file, false);
  const text = (source: string, file: string): Fill => compileFill(hbs, source, file, true);

  const digestHtml = splitCardBlock(sources.digestHtml, 'digest.mjml');
  const digestText = splitCardBlock(sources.digestText, 'digest.txt.hbs');
  const pieces = (source: string, file: string, plainText: boolean): BlockPieces =>
    readerPieces(source).map((p, i) => {
      const name = `${file} (${p.reader ? 'reader part' : 'shared part'} ${i + 1})`;
      const fill = compileFill(hbs, p.source, name, plainText);
      return { reader: p.reader, fill, readsPaper: READS_PAPER.test(p.source) };
    });
  return {
    digestShellHtml: html(digestHtml.shell, 'digest.mjml'),
    digestShellSource: digestHtml.shell,
    digestShellText: text(digestText.shell, 'digest.txt.hbs'),
    fullHtml: pieces(digestHtml.card, 'digest.mjml paper card', false),
    fullText: pieces(digestText.card, 'digest.txt.hbs paper card', true),
    compactHtml: pieces(digestHtml.compact, 'digest.mjml compact line', false),
    compactText: pieces(digestText.compact, 'digest.txt.hbs compact line', true),
    confirmHtml: html(sources.confirmHtml, 'confirm.mjml'),
    confirmText: text(sources.confirmText, 'confirm.txt.hbs'),
    webPage: html(sources.webPage, 'digest-web.hbs'),
  };
}

async function readTemplate(dir: string, file: string): Promise<string> {
  const path = join(dir, file);
  try {
    return await readFile(path, 'utf8');
  } catch (cause) {
    throw new AppError('template_missing', `template ${path} cannot be read`, { cause });
  }
}

/** The one and only place MJML runs: strict validation, minified, no web fonts. */
/**
 * MJML's output per template file and source, for this process: a process that builds the app more than
 * once from the sources (the tests, ~0.5 s of MJML per build) runs MJML once per template. A template
 * that fails is not kept: it fails again, naming the file, each time.
 */
const mjmlOutputs = new Map<string, string>();

async function mjmlToHtml(dir: string, file: string, source: string): Promise<string> {
  const key = `${join(dir, file)}\u0000${source}`;
  const known = mjmlOutputs.get(key);
  if (known !== undefined) return known;
  const html = await runMjml(dir, file, source);
  mjmlOutputs.set(key, html);
  return html;
}

async function runMjml(dir: string, file: string, source: string): Promise<string> {
  // Loaded here, not at the top: code that only fills compiled templates never loads MJML.
  const { default: mjml2html } = await import('mjml');
  try {
    const result = await mjml2html(source, {
      validationLevel: 'strict',
      fonts: {},
      keepComments: false,
      minify: true,
      // cssnano 8 (the default CSS minifier) crashes on Node 20.
      minifyOptions: { minifyCss: false },
      filePath: join(dir, file),
    });
    return result.html;
  } catch (cause) {
    const details = validationDetails(cause);
    throw new AppError('template_invalid', `template ${join(dir, file)} is not valid MJML${details}`, { cause });
  }
}

function validationDetails(err: unknown): string {
  const list = (err as { errors?: Array<{ formattedMessage?: string; message?: string }> }).errors;
  if (Array.isArray(list) && list.length > 0) {
    return `: ${list.map((e) => e.formattedMessage ?? e.message ?? String(e)).join('; ')}`;
  }
  return err instanceof Error ? `: ${err.message}` : '';
}

/** Cuts the card blocks out of a digest template: the shell gets slots where the encoded cards go. */
export function splitCardBlock(source: string, file: string): { shell: string; card: string; compact: string } {
  const cut = (src: string, block: RegExp, name: string, slot: string) => {
    const match = block.exec(src);
    if (match === null || match[1] === undefined) {
      throw new AppError('template_invalid', `template ${file} has no {{#${name}}}…{{/${name}}} block`);
    }
    return { rest: src.slice(0, match.index) + slot + src.slice(match.index + match[0].length), block: match[1] };
  };
  const card = cut(source, CARD_BLOCK, 'papers', CARDS_SLOT);
  const compact = cut(card.rest, COMPACT_BLOCK, 'compact', COMPACT_SLOT);
  return { shell: compact.rest, card: card.block, compact: compact.block };
}

/**
 * A block's source cut at its {{#reader}}…{{/reader}} parts. A reader tag alone on its line takes its
 * line break with it, as Handlebars' standalone tags do (the pieces are compiled apart).
 */
export function readerPieces(source: string): Array<{ reader: boolean; source: string }> {
  const out: Array<{ reader: boolean; source: string }> = [];
  let at = 0;
  for (const m of source.matchAll(READER_PART)) {
    let before = source.slice(at, m.index);
    let inner = m[1]!;
    let end = m.index + m[0].length;
    const openAlone = (m.index === 0 || source[m.index - 1] === '\n') && inner.startsWith('\n');
    if (openAlone) inner = inner.slice(1);
    const closeAlone = inner.endsWith('\n') && source[end] === '\n';
    if (closeAlone) end++;
    out.push({ reader: false, source: before });
    out.push({ reader: true, source: inner });
    at = end;
    before = '';
  }
  out.push({ reader: false, source: source.slice(at) });
  return out.filter((p) => p.reader || p.source !== '');
}

function compileFill(hbs: typeof Handlebars, source: string, file: string, plainText: boolean): Fill {
  try {
    // Parse now (Handlebars compiles lazily on first call otherwise) so syntax errors surface here.
    hbs.parse(source);
    // strict: a field the template names but the view lacks is an error, not a silent blank.
    const template = hbs.compile(source, { noEscape: plainText, strict: true });
    return (view) => template(view);
  } catch (cause) {
    throw new AppError('template_invalid', `template ${file}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}
