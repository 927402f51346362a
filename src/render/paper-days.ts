// The batch day of each paper a send run has read, by paper id, in one typed array: all the loader needs of
// the papers a digest holds but its email does not show (render/view.ts, LoadOptions.papers), ~140 of a
// broad digest's ~190. Those are only counted and their days noted, for the intro's "papers of 24-26 Nov".
//
// Decision: a day as a small id in an array indexed by paper id (one read from a few KB that stay in cache),
// not a read through the paper cache per paper (a Map lookup and a string comparison, both cache misses).
// Measured: BENCHMARKS.md § Why the code is shaped this way, paper-days.ts.
//
// Bounded: ids within MAX_SPAN of each other (4 bytes each: 1 MB at most). A run's papers are a few
// thousand consecutive ids; a paper outside the span is simply not kept here, and the loader reads it
// through its cache as before.

/** Ids one array covers at most. */
const MAX_SPAN = 1 << 18;
/** Ids a new array covers at first. */
const FIRST_SPAN = 4096;

export class PaperDays {
  /** Day ids (intern()) by paper id - base; 0 where not known. */
  private days = new Int32Array(0);
  private base = 0;
  /** Each day's text by its id (id 0 stands for none), and the ids by text: a run holds a few days. */
  private readonly texts: string[] = [''];
  private readonly ids = new Map<string, number>();

  /**
   * A small id for a day's text (from 1), the same for the same text: what get() returns and the loader
   * compares, so that papers of one day are told apart from the first and last day without reading a string.
   */
  intern(day: string): number {
    let id = this.ids.get(day);
    if (id === undefined) {
      id = this.texts.length;
      this.texts.push(day);
      this.ids.set(day, id);
    }
    return id;
  }

  /** Keeps paper `id`'s day (its intern() id), unless the id lies too far from the others. */
  set(id: number, day: number): void {
    if (this.cover(id)) this.days[id - this.base] = day;
  }

  /** Paper `id`'s day id (intern()), or 0 when it is not kept. */
  get(id: number): number {
    const i = id - this.base;
    return i >= 0 && i < this.days.length ? this.days[i]! : 0;
  }

  /** The text of a day id. */
  text(day: number): string {
    return this.texts[day]!;
  }

  /** Makes the array cover `id` (grown to twice what is needed, within MAX_SPAN); false if it cannot. */
  private cover(id: number): boolean {
    if (this.days.length === 0) {
      this.base = Math.max(0, id - FIRST_SPAN / 2);
      this.days = new Int32Array(FIRST_SPAN);
    }
    const i = id - this.base;
    if (i >= 0 && i < this.days.length) return true;
    const lo = Math.min(this.base, id);
    const hi = Math.max(this.base + this.days.length, id + 1);
    if (hi - lo > MAX_SPAN) return false;
    const span = Math.min(MAX_SPAN, 2 * (hi - lo));
    const base = Math.max(0, id < this.base ? hi - span : lo);
    const days = new Int32Array(span);
    days.set(this.days, this.base - base);
    this.days = days;
    this.base = base;
    return true;
  }
}
