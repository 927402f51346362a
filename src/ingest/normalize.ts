// Normalisation shared by every reader: arXiv ids (no version, no prefix), tidy titles and text,
// author lists, dates. Pure functions, no I/O.

/** New-style arXiv id (0704.0001 onwards): YYMM.NNNN or YYMM.NNNNN, optional version. */
const NEW_STYLE_ID = /^(\d{4}\.\d{4,5})(?:v\d+)?$/;
/** Old-style arXiv id (before 2007): archive[.SUBJECT]/YYMMNNN, optional version, e.g. hep-th/9901001v1, math.GT/0309136. */
const OLD_STYLE_ID = /^([a-z][a-z-]*(?:\.[A-Z]{2})?\/\d{7})(?:v\d+)?$/i;
/** Prefixes and URL forms arXiv ids arrive in. Order matters: longest first. */
const ID_PREFIXES: RegExp[] = [
  /^oai:arxiv\.org:/i,
  /^arxiv:/i,
  /^https?:\/\/(?:www\.|export\.)?arxiv\.org\/(?:abs|pdf|html)\//i,
  /^https?:\/\/(?:www\.)?huggingface\.co\/papers\//i,
];

/**
 * The arXiv id without version or prefix, or null when the input is not an arXiv id.
 * `2511.01234v2`, `arXiv:2511.01234`, `oai:arXiv.org:2511.01234v1`, `https://arxiv.org/abs/2511.01234v3`
 * all give `2511.01234`; `hep-th/9901001v1` gives `hep-th/9901001`.
 */
export function normalizeArxivId(raw: string): string | null {
  let s = raw.trim();
  for (const p of ID_PREFIXES) s = s.replace(p, '');
  s = s.replace(/\.pdf$/i, '').replace(/[?#].*$/, '').replace(/\/+$/, '');
  const n = NEW_STYLE_ID.exec(s);
  if (n) return n[1]!;
  const o = OLD_STYLE_ID.exec(s);
  if (o) {
    // The archive is lower case, the subject class (math.GT) upper case.
    const [archive, rest] = o[1]!.split('/') as [string, string];
    const [name, subject] = archive.split('.');
    return `${name!.toLowerCase()}${subject ? `.${subject.toUpperCase()}` : ''}/${rest}`;
  }
  return null;
}

/** The key a paper is stored under: the normalised arXiv id when it is one, else the trimmed id as given. */
export function paperKey(rawId: string): string {
  return normalizeArxivId(rawId) ?? rawId.trim();
}

/**
 * C0 control characters but tab and newline, and DEL: nothing a feed means as text, and what a terminal,
 * a mail header or a reader's client may act on (ESC sequences, CR, NUL).
 */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** Feed text with the control characters removed (tab and newline kept). */
export function withoutControls(s: string): string {
  return s.replace(CONTROL_CHARACTERS, '');
}

/** Collapses runs of whitespace (newlines, tabs, non-breaking spaces) into one space and trims; control characters go. */
export function tidyWhitespace(s: string): string {
  return withoutControls(s.replace(/[\s\u00a0]+/g, ' ')).trim();
}

const GREEK: Record<string, string> = {
  alpha: 'α', beta: 'β', gamma: 'γ', delta: 'δ', epsilon: 'ε', varepsilon: 'ε', zeta: 'ζ', eta: 'η',
  theta: 'θ', iota: 'ι', kappa: 'κ', lambda: 'λ', mu: 'μ', nu: 'ν', xi: 'ξ', pi: 'π', rho: 'ρ',
  sigma: 'σ', tau: 'τ', upsilon: 'υ', phi: 'φ', varphi: 'φ', chi: 'χ', psi: 'ψ', omega: 'ω',
  Gamma: 'Γ', Delta: 'Δ', Theta: 'Θ', Lambda: 'Λ', Xi: 'Ξ', Pi: 'Π', Sigma: 'Σ', Phi: 'Φ', Psi: 'Ψ', Omega: 'Ω',
};
const SYMBOLS: Record<string, string> = {
  times: '×', cdot: '·', leq: '≤', le: '≤', geq: '≥', ge: '≥', neq: '≠', approx: '≈', infty: '∞',
  to: '→', rightarrow: '→', leftarrow: '←', pm: '±', sim: '~', ell: 'ℓ', ldots: '…', dots: '…',
};
const ACCENTS: Record<string, Record<string, string>> = {
  "'": { a: 'á', e: 'é', i: 'í', o: 'ó', u: 'ú', y: 'ý', c: 'ć', n: 'ń', s: 'ś', z: 'ź', E: 'É', A: 'Á', O: 'Ó' },
  '`': { a: 'à', e: 'è', i: 'ì', o: 'ò', u: 'ù', E: 'È', A: 'À' },
  '"': { a: 'ä', e: 'ë', i: 'ï', o: 'ö', u: 'ü', A: 'Ä', O: 'Ö', U: 'Ü' },
  '^': { a: 'â', e: 'ê', i: 'î', o: 'ô', u: 'û' },
  '~': { a: 'ã', n: 'ñ', o: 'õ', N: 'Ñ' },
  c: { c: 'ç', C: 'Ç' },
  v: { c: 'č', s: 'š', z: 'ž', r: 'ř', e: 'ě', C: 'Č', S: 'Š', Z: 'Ž' },
};

/**
 * Tidies a title as arXiv sends it: LaTeX text commands and math delimiters removed, Greek letters
 * and common symbols as Unicode, accents composed, braces dropped, whitespace collapsed.
 * Plain titles (Hugging Face, batch files) pass through unchanged apart from whitespace.
 */
export function tidyTitle(raw: string): string {
  let s = raw;
  if (/[\\$]/.test(s) || /\{[^}]*\}/.test(s)) {
    s = composeAccents(s);
    // Font and text commands keep their argument: \textbf{X}, \emph{X}, \mathcal{X}, \texttt{X}
    for (let i = 0; i < 3; i++) {
      s = s.replace(/\\(?:text[a-z]*|emph|math[a-z]*|operatorname|mbox|hbox|bm|boldsymbol)\s*\{([^{}]*)\}/g, '$1');
    }
    s = s.replace(/\\[,;:! ]/g, ' ');
    // Other commands: known symbols as Unicode, unknown ones by name (\LaTeX -> LaTeX).
    s = s.replace(/\\([A-Za-z]+)/g, (_m, name: string) => GREEK[name] ?? SYMBOLS[name] ?? name);
    // Escaped characters stay; math delimiters and grouping braces go.
    s = s.replace(/\\([&%$#_{}])|[${}]/g, (_m, escaped?: string) => escaped ?? '');
  }
  return tidyWhitespace(s);
}

/** LaTeX accents as composed letters: \\'e, \\'{e}, {\\'e}, \\"{o}, \\~n, \\c{c}, \\v{s} (Pok\\'emon -> Pokémon). */
function composeAccents(text: string): string {
  let s = text.replace(/\{\\(['`"^~])\s*\{?([A-Za-z])\}?\}/g, (_m, accent: string, letter: string) => ACCENTS[accent]?.[letter] ?? letter);
  s = s.replace(/\\(['`"^~])\s*\{?([A-Za-z])\}?/g, (_m, accent: string, letter: string) => ACCENTS[accent]?.[letter] ?? letter);
  return s.replace(/\\([cv])(?:\{([A-Za-z])\}|\s+([A-Za-z]))/g, (_m, accent: string, a?: string, b?: string) => {
    const letter = (a ?? b)!;
    return ACCENTS[accent]?.[letter] ?? letter;
  });
}

/**
 * An abstract with whitespace tidied, LaTeX accents composed and text-style commands unwrapped
 * (\\emph{x}, \\textbf{x} -> x), so matching, highlighting and the email all see `Pokémon`, not
 * `Pok\\'emon`. Math ($…$) is left as written: it carries meaning. Used for every source (arXiv,
 * Hugging Face, batch files): the same paper reads the same whichever source brought it.
 */
export function tidyAbstract(raw: string): string {
  let s = raw;
  if (s.includes('\\')) {
    s = composeAccents(s);
    for (let i = 0; i < 3; i++) s = s.replace(/\\(?:text(?:bf|it|sc|tt|rm|sf)|emph)\s*\{([^{}$]*)\}/g, '$1');
  }
  return tidyWhitespace(s);
}

/**
 * Splits an arXiv author line: "A. Smith, B. Jones (MIT, CMU), C. Lee and D. Park" gives
 * ["A. Smith", "B. Jones", "C. Lee", "D. Park"]. Commas inside parentheses (affiliations) do not split,
 * and affiliations are dropped.
 */
export function splitAuthors(line: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of line) {
    if (ch === '(') depth++;
    if (ch === ')') depth = Math.max(0, depth - 1);
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts
    .flatMap((p) => p.split(/^\s*and\s+|\s+and\s+(?![^()]*\))/))
    .map((p) => tidyTitle(p.replace(/\([^()]*\)/g, '')))
    .filter((p) => p.length > 0);
}

const MONTHS: Record<string, string> = {
  jan: '01', feb: '02', mar: '03', apr: '04', may: '05', jun: '06',
  jul: '07', aug: '08', sep: '09', oct: '10', nov: '11', dec: '12',
};

/** True for a real calendar date written YYYY-MM-DD. */
export function isCalendarDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/**
 * The calendar day a feed date names, as written in its own time zone (no conversion):
 * ISO `2025-11-24T00:00:00-05:00` and RFC 822 `Mon, 24 Nov 2025 00:00:00 -0500` both give 2025-11-24.
 * Null when the text is not a date.
 */
export function dayOf(raw: string | undefined | null): string | null {
  if (!raw) return null;
  const s = raw.trim();
  const iso = /^(\d{4}-\d{2}-\d{2})(?:$|[T ])/.exec(s);
  if (iso) return isCalendarDate(iso[1]!) ? iso[1]! : null;
  const rfc = /(?:^|\s|,)(\d{1,2})\s+([A-Za-z]{3})[a-z]*\.?\s+(\d{4})\b/.exec(s);
  if (rfc) {
    const month = MONTHS[rfc[2]!.toLowerCase()];
    const day = `${rfc[3]}-${month}-${rfc[1]!.padStart(2, '0')}`;
    return month && isCalendarDate(day) ? day : null;
  }
  return null;
}
