// The folders of src/ in the order the work flows, and the figures that say whether the code follows it:
// the folder-level import graph, the folders caught in import loops, and the arrows that run back up the
// layers (a folder importing one declared later). `npx tsx scripts/layers.ts` prints them;
// tests/unit/architecture.test.ts fails on a new loop or a new back-arrow.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * First to last: a unit may import its own layer and the layers listed before it, never one listed after.
 * A unit is a folder of src/ with its subfolders (a subfolder named here, like subscribers/records, is a
 * unit of its own), or a file directly in src/. Each layer says in one line why it sits where it does.
 */
export const LAYERS: readonly Layer[] = [
  {
    name: 'foundation',
    units: ['errors.ts', 'clock.ts', 'log.ts', 'types.ts', 'types', 'words.ts', 'html.ts', 'backoff.ts', 'settings.ts', 'trust-proxy.ts', 'tokens.ts', 'links.ts', 'cli-io.ts', 'db'],
    why: 'what every stage speaks: errors, time, logs, the Paper type, signed links, the database handle',
  },
  { name: 'mail', units: ['mail'], why: 'an SMTP client and MIME writer with no word of papers or readers: a library for whoever sends' },
  { name: 'ingest', units: ['ingest'], why: 'source -> papers table, the first stage; each source kind declares its own settings' },
  { name: 'config', units: ['config.ts'], why: "the settings, gathered from the stages that declare them (the source kinds', the relay's)" },
  { name: 'match', units: ['match'], why: 'topics parsed into queries and matched against the ingested papers; like: widens a topic' },
  {
    name: 'subscriber records',
    units: ['subscribers/records', 'consent'],
    why: 'the subscribers table and the opt-out history: read and written by every later stage (watermark, suppression, links)',
  },
  {
    name: 'plan',
    units: ['feedback', 'plan', 'ledger'],
    why: 'the ledger rows of every slot that has come, the ledger that holds them, the reader model that orders them',
  },
  { name: 'render', units: ['render'], why: 'a ledger row -> the bytes of one email (render/encode: the body encoders)' },
  { name: 'bounces', units: ['bounces'], why: 'what a failure means (classify, VERP tag, record): send uses it at once, the receiver later' },
  { name: 'send', units: ['send'], why: 'claims ledger rows, renders them, hands them to the relay, records the outcome (send/postgres: the same on PostgreSQL)' },
  { name: 'notices', units: ['notices', 'feed'], why: 'the other mail and pages a subscriber gets: confirmation notices (sent as digests are), the Atom feed' },
  { name: 'report', units: ['report'], why: 'operator and reader figures read over every stage (status, overdue, why no email)' },
  { name: 'subscribers', units: ['subscribers'], why: "the subscribers' own services: subscribe, preferences, import; they use every stage below" },
  { name: 'pipeline', units: ['pipeline.ts', 'pipeline-postgres.ts', 'scheduler.ts'], why: 'the stages run in order, once per tick (pipeline-postgres: `digest run` on PostgreSQL)' },
  { name: 'console', units: ['admin', 'operator'], why: "the operator's services: the console's figures, imports, opt-out lifting; what the commands call" },
  { name: 'web', units: ['web'], why: 'HTTP: routes call services and decide statuses' },
  { name: 'root', units: ['main.ts', 'serve.ts'], why: 'the composition root: makes every service once, and wires serve (scheduler, web, bounce receiver, signals)' },
  {
    name: 'cli',
    units: ['cli', 'cli.ts', 'cli-commands.ts', 'cli-config.ts', 'cli-consent.ts', 'cli-log.ts', 'cli-restore.ts', 'config-check.ts', 'doctor'],
    why: 'the `digest` command, which builds the App through main.ts; doctor is one of its commands',
  },
];

export interface Layer {
  name: string;
  units: readonly string[];
  /** One line: why this layer sits here. */
  why: string;
}

export interface Arrow {
  from: string;
  to: string;
}

const SOURCE = /\.(ts|mts|mjs)$/;
// Static, type-only, re-export and dynamic imports of a relative path; a type import is a dependency too.
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;
// `import type { … } from '…'` and `export type { … } from '…'`, for the figures of value imports only.
const TYPE_ONLY = /\b(?:import|export) type [\s\S]*?from\s*['"][^'"]+['"]/g;

/**
 * Every relative import of every source file under `srcDir`, as paths relative to it ('web/server.ts');
 * `valuesOnly` leaves out the type-only ones (what runs, as against what a reader must know).
 */
export function fileImports(srcDir: string, { valuesOnly = false } = {}): Arrow[] {
  const arrows: Arrow[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (SOURCE.test(e.name) && !e.name.endsWith('.d.ts')) {
        const text = readFileSync(path, 'utf8');
        for (const m of (valuesOnly ? text.replace(TYPE_ONLY, '') : text).matchAll(IMPORT)) {
          const to = normalize(join(dirname(path), m[1]!));
          arrows.push({ from: toPosix(relative(srcDir, path)), to: toPosix(relative(srcDir, to)) });
        }
      }
    }
  };
  walk(srcDir);
  return arrows;
}

const toPosix = (p: string) => p.split(sep).join('/');

const declared = new Set(LAYERS.flatMap((l) => l.units));

/** 'web/routes/feed.ts' -> 'web'; 'subscribers/records/repo.ts' -> 'subscribers/records'; 'main.ts' -> 'main.ts'. */
export function unitOf(file: string): string {
  const parts = file.split('/');
  for (let n = parts.length - 1; n > 1; n--) {
    const folder = parts.slice(0, n).join('/');
    if (declared.has(folder)) return folder;
  }
  return parts[0]!;
}

const layerIndex = new Map(LAYERS.flatMap((l, i) => l.units.map((u) => [u, i] as const)));
export const layerOf = (unit: string): number | undefined => layerIndex.get(unit);

/** Units named by no layer (a new folder must be given its place). */
export function undeclaredUnits(arrows: readonly Arrow[]): string[] {
  const units = new Set(arrows.flatMap((a) => [unitOf(a.from), unitOf(a.to)]));
  return [...units].filter((u) => layerOf(u) === undefined).sort();
}

/** The imports that run back up the layers: from a unit to one of a layer listed after its own. */
export function backArrows(arrows: readonly Arrow[]): Arrow[] {
  return arrows.filter((a) => {
    const from = layerOf(unitOf(a.from));
    const to = layerOf(unitOf(a.to));
    return from !== undefined && to !== undefined && to > from;
  });
}

/** Distinct unit pairs ('plan -> feedback') of some arrows. */
export const unitPairs = (arrows: readonly Arrow[]): string[] =>
  [...new Set(arrows.map((a) => `${unitOf(a.from)} -> ${unitOf(a.to)}`))].sort();

/** The units' strongly connected components of more than one unit: the folders caught in import loops. */
export function unitLoops(arrows: readonly Arrow[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const a of arrows) {
    const [f, t] = [unitOf(a.from), unitOf(a.to)];
    if (!next.has(f)) next.set(f, new Set());
    if (!next.has(t)) next.set(t, new Set());
    if (f !== t) next.get(f)!.add(t);
  }
  // Tarjan's algorithm; the graph has a few dozen nodes, recursion is fine.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

// Run directly (`npx tsx scripts/layers.ts [--values]`, from the repository's root): print the figures.
if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const arrows = fileImports('src', { valuesOnly: process.argv.includes('--values') });
  const back = backArrows(arrows);
  const loops = unitLoops(arrows);
  console.log(`undeclared units: ${undeclaredUnits(arrows).join(', ') || 'none'}`);
  console.log(`arrows back up the layers: ${unitPairs(back).length} folder pairs, ${back.length} imports`);
  for (const a of back) console.log(`  ${a.from} -> ${a.to}`);
  console.log(`folders in import loops: ${loops.reduce((n, l) => n + l.length, 0)} in ${loops.length} loops`);
  for (const l of loops) console.log(`  ${l.join(', ')}`);
}
