// A reader's matched topics ("Matched: <strong>…</strong> <a href=…>mute</a>" and the text part's
// "Matched: a; b") as ONE run of encoded bytes per digest, reused by every card that matched the same topics.
//
// A card's reader part is a shape's texts with the reader's values between them (reader-shape.ts). Its
// matched topics are ~2-6 of those values (each topic's text and mute link) and they are the same on every
// card of the digest that matched the same topics: the loader gives those papers one shared topic list
// (view.ts), and a broad digest's ~45 cards shown have ~3-7 lists. Written per card, each value was checked,
// escaped and encoded where it landed. Here the stretch from a part's first matched value to its last,
// texts between included, is encoded once per digest and list and joined as one segment: the HTML laid
// out once from the state the part is in there, the text part encoded for the column it lands on (always
// the same: it follows a line's fixed start).
// Measured: BENCHMARKS.md § Why the code is shaped this way, topic-runs.ts.
import { encodeHtmlSegment, htmlWireLength, type HtmlSegment } from './encode/html-body.ts';
import { encodeQpRun, type QpRun } from './encode/qp-body.ts';
import { escapeValue } from './render-templates.ts';

/** Where a part's matched values lie: slots[from..to] (reader-shape.ts ShapedPart.run). */
export interface RunSpan {
  from: number;
  to: number;
}

/** What a run needs of a shaped part (reader-shape.ts ShapedPart). */
interface RunPart {
  texts: string[];
  slots: number[];
  /** HTML parts: the texts' segments, each laid out from the state the one before ends in. */
  segments?: HtmlSegment[] | undefined;
  run?: RunSpan | undefined;
}

/** A run of the HTML: its segment, and the size its values add (as filledSize sums them per value). */
export interface HtmlRun {
  seg: HtmlSegment;
  valuesSize: number;
}

/** First slot of the matched topics' values (reader-shape.ts: per topic its mute link, then its text). */
export const FIRST_TOPIC_SLOT = 5;

/** One digest's topic list: its values (HTML escaped and as they are) and its runs, made when first asked. */
export class TopicRuns {
  /** The values of slots FIRST_TOPIC_SLOT on, escaped for HTML: per topic its mute link, then its text. */
  readonly html: string[] = [];
  /** The same as they are (the text part). */
  readonly text: string[] = [];
  private readonly htmlRuns = new Map<RunPart, HtmlRun>();
  private readonly textRuns = new Map<RunPart, QpRun>();

  constructor(matched: ReadonlyArray<{ text: string; muteUrl: string }>) {
    for (const m of matched) {
      this.html.push(escapeValue(m.muteUrl), escapeValue(m.text));
      this.text.push(m.muteUrl, m.text);
    }
  }

  /** The HTML run of `part` (which must have one, and its segments: part.run, part.segments). */
  htmlRun(part: RunPart): HtmlRun {
    let run = this.htmlRuns.get(part);
    if (run === undefined) {
      const span = part.run!;
      let valuesSize = 0;
      for (let k = span.from; k <= span.to; k++) valuesSize += htmlWireLength(this.html[part.slots[k]! - FIRST_TOPIC_SLOT]!);
      // Laid out from the state the part's text before it ends in (HtmlBodyWriter.layoutKey there).
      const before = part.segments![span.from]!;
      run = { seg: encodeHtmlSegment(runText(part, this.html), before.endState * 2 + (before.rawNext ? 1 : 0)), valuesSize };
      this.htmlRuns.set(part, run);
    }
    return run;
  }

  /** The text part's run of `part`, encoded for column `col` (again when last made for another). */
  textRun(part: RunPart, col: number): QpRun {
    let run = this.textRuns.get(part);
    if (run === undefined || run.col !== col) {
      run = encodeQpRun(runText(part, this.text), col);
      this.textRuns.set(part, run);
    }
    return run;
  }
}

/** The run's text: its first value to its last, with the part's texts between. */
function runText(part: RunPart, values: readonly string[]): string {
  const { from, to } = part.run!;
  let s = values[part.slots[from]! - FIRST_TOPIC_SLOT]!;
  for (let k = from + 1; k <= to; k++) s += part.texts[k]! + values[part.slots[k]! - FIRST_TOPIC_SLOT]!;
  return s;
}

/**
 * Where the matched values of a part lie, if they are one stretch with no other value in it (our
 * templates; one that puts a feedback link between two topics gets no run and is written per value).
 */
export function runSpan(slots: readonly number[]): RunSpan | undefined {
  let from = -1;
  let to = -1;
  for (let k = 0; k < slots.length; k++) {
    if (slots[k]! < FIRST_TOPIC_SLOT) continue;
    if (from < 0) from = k;
    else if (k !== to + 1) return undefined;
    to = k;
  }
  return from < 0 ? undefined : { from, to };
}
