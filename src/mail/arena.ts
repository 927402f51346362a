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
  protected arena: Buffer;
  protected used = 0;
  private readonly taken: Buffer[] = [];

  constructor(private readonly pool?: ArenaPool) {
    this.arena = this.newArena(0);
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
