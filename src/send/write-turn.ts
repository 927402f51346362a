// Whose turn it is to write the ledger, among the sending threads of one run.
//
// Each sending thread writes once per digest (record the delivery + claim the next row, ledger/states.ts), on its
// own SQLite connection. When two threads' transactions meet, SQLite's busy handler puts the later one to
// sleep for at least 1 ms (then 2, 5, 10 ms…), whatever the other holds the lock for (~0.1 ms), and while it
// sleeps its whole thread stops: no replies read, nothing rendered. With two threads that was a sixth of
// each thread's time. Measured: BENCHMARKS.md § Why the code is shaped this way, write-turn.ts.
//
// So the threads take turns themselves, over one shared cell (SharedArrayBuffer + Atomics): a lane waits
// for its turn asynchronously (Atomics.waitAsync: its thread's event loop goes on), is woken the moment
// the other thread's transaction ends, and then finds SQLite's lock free. The turn is only an
// optimisation: SQLite's lock still decides (another process, the main thread, a failure-path write may
// hold it, and its busy handling still applies). A thread that died holding the turn cannot stall the
// others: a wait gives up after MAX_WAIT_MS and takes the turn.
//
// A run in one thread has no turn to take (no other sending thread).

/** Longest wait for the turn before taking it anyway (a holder should need well under 1 ms). */
const MAX_WAIT_MS = 50;
const FREE = 0;
const HELD = 1;

type WaitAsync = (cells: Int32Array, index: number, value: number, timeoutMs: number) =>
  { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };

export class WriteTurn {
  private readonly cells: Int32Array;

  /** `shared`: another thread's turn.memory, or none for a new one. */
  constructor(shared?: SharedArrayBuffer) {
    this.cells = new Int32Array(shared ?? new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  }

  /** Hand this to other threads (workerData) so they take turns with this one. */
  get memory(): SharedArrayBuffer {
    return this.cells.buffer as SharedArrayBuffer;
  }

  async acquire(): Promise<void> {
    const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;
    for (;;) {
      if (Atomics.compareExchange(this.cells, 0, FREE, HELD) === FREE) return;
      const w = waitAsync(this.cells, 0, HELD, MAX_WAIT_MS);
      const outcome = w.async ? await w.value : w.value;
      if (outcome === 'timed-out') {
        // The holder is gone or stuck: take the turn (SQLite's lock still keeps the writes apart).
        Atomics.store(this.cells, 0, HELD);
        return;
      }
    }
  }

  release(): void {
    Atomics.store(this.cells, 0, FREE);
    Atomics.notify(this.cells, 0, 1);
  }

  /** Runs `fn` (a write, and its own retries) in this thread's turn. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}
