// Scratch memory the body writers (qp-body.ts, html-body.ts) encode a reader's text into: one pool per
// renderer (so per thread), and the bookkeeping both writers share.

/**
 * Scratch buffers the writers encode a reader's text into, reused from message to message (one pool per
 * renderer, so per thread). Without it each digest left ~50 KB of 8 KB Buffers behind, memory outside
 * V8's heap that is collected only when such garbage reaches tens of MB. A writer gives its arenas back
 * when the email is released (after it was sent); at most `keep` are kept.
 */
export class ArenaPool {
  private readonly free: Buffer[] = [];
  constructor(
    readonly size = 32 * 1024,
    private readonly keep = 64,
  ) {}

  take(min: number): Buffer {
    if (min > this.size) return Buffer.allocUnsafeSlow(min);
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  give(b: Buffer): void {
    if (b.length === this.size && this.free.length < this.keep) this.free.push(b);
  }
}

/**
 * A body writer's arenas: the current one, how much of it is used, and those taken from the pool (given
 * back by release() once the email has been sent). Without a pool, plain Buffers left to the collector.
 */
export abstract class ArenaWriter {
  /** Parts so far; the arena's bytes from `pending` on are not among them yet (see `parts`). */
  private readonly out: Buffer[] = [];
  /** Encoded bytes so far. */
  bytes = 0;
  protected arena: Buffer;
  protected used = 0;
  private readonly taken: Buffer[] = [];
  /** Where the current run started in the arena (-1: no run). */
  private runStart = -1;
  /**
   * Where the arena's bytes not yet cut as a part start (-1: none). Bytes written one after another in the
   * arena (runs, the reader's text) become ONE part when something else comes between them or the arena
   * changes. Decision: a view per run (a card, a reader part) was ~12% of what a diverse digest allocated
   * (sampling heap profile, BENCHMARKS.md 2026-11-27), and the cards of a digest's HTML lie one after another.
   */
  private pending = -1;

  constructor(private readonly pool?: ArenaPool) {
    this.arena = this.newArena(0);
  }

  /**
   * Starts a run: until endRun(), shared segments are copied into the arena and the reader's text written
   * there too, so that a card with its highlights and the reader's part (ten to twenty pieces) becomes ONE
   * Buffer part (a Buffer view costs ~0.2 µs to make and is garbage after the send; ~400 of them per
   * friendly digest before runs, and as many parts for the MIME builder to copy). `need`: at most the
   * bytes the run writes. Runs nest (a text card's run holds its reader part's): an inner one only makes
   * room for its `need`, and the outer one's endRun() ends it.
   */
  beginRun(need: number): void {
    if (this.depth++ > 0) {
      this.space(need);
      return;
    }
    this.room(need);
    this.runStart = this.used;
  }

  endRun(): void {
    if (this.depth > 0 && --this.depth > 0) return;
    this.closeRun();
  }

  /** Runs begun and not ended (beginRun nests). */
  private depth = 0;

  private closeRun(): void {
    if (this.runStart >= 0 && this.used > this.runStart && this.pending < 0) this.pending = this.runStart;
    this.runStart = -1;
  }

  /** The body: Buffer parts, shared ones by reference, the reader's own cut from the arenas. */
  get parts(): Buffer[] {
    this.cut();
    return this.out;
  }

  /** The arena's bytes written since the last part, as a part. */
  private cut(): void {
    if (this.pending < 0) return;
    if (this.used > this.pending) this.out.push(this.arena.subarray(this.pending, this.used));
    this.pending = -1;
  }

  /** Appends shared bytes: by reference, or copied when in a run. */
  protected push(b: Buffer): void {
    if (b.length === 0) return;
    if (this.runStart >= 0) {
      this.arena.set(b, this.used);
      this.used += b.length;
    } else {
      this.cut();
      this.out.push(b);
    }
    this.bytes += b.length;
  }

  /** Appends bytes a run's `need` may not have counted: in a run, room is made for them first. */
  protected pushUncounted(b: Buffer): void {
    if (this.runStart >= 0) this.space(b.length);
    this.push(b);
  }

  /** The arena with `need` bytes free at `used`; a run that would not fit (beginRun's need was short) goes on in a new one. */
  protected space(need: number): Buffer {
    if (this.runStart >= 0 && this.arena.length - this.used < need) {
      this.closeRun();
      this.room(need);
      this.runStart = this.used;
    }
    return this.room(need);
  }

  /** Bytes [start, end) just written into the arena at `used`: left in place, cut as a part with those after them (cut()). */
  protected wrote(start: number, end: number): void {
    this.bytes += end - start;
    if (this.runStart < 0 && end > start && this.pending < 0) this.pending = start;
    this.used = end;
  }

  /** Gives the arenas back: the parts cut from them must not be read after this. */
  release(): void {
    if (!this.pool) return;
    for (const a of this.taken) this.pool.give(a);
    this.taken.length = 0;
  }

  /**
   * The current arena, with at least `need` bytes free from `used` on (a new one when it has not: the
   * parts already cut from the old one keep it alive until the body is sent).
   */
  protected room(need: number): Buffer {
    if (this.arena.length - this.used < need) {
      this.cut();
      this.arena = this.newArena(need);
      this.used = 0;
    }
    return this.arena;
  }

  private newArena(min: number): Buffer {
    if (!this.pool) return Buffer.allocUnsafe(Math.max(min, 8 * 1024));
    const a = this.pool.take(min);
    this.taken.push(a);
    return a;
  }
}
