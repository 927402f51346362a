// "Is the relay down?" across every thread of one send run. Connection failures in a row (whichever
// thread saw them) are counted in memory shared by the threads (a SharedArrayBuffer read and written
// with Atomics); any delivery resets the count. At RELAY_DOWN_AFTER the run pauses: every thread stops
// claiming, and each gives back its own rows of the current streak (they were not counted as attempts).
//
// A send run in one thread uses the same class over ordinary memory.

/** Cells of the shared state. */
const STREAK = 0; // consecutive connection failures, all threads together
const EPOCH = 1; // bumped on every reset, so a thread can tell its old failures from the current streak
const PAUSED = 2; // 1 once the run is paused
const CELLS = 3;

export class RelayWatch {
  private readonly cells: Int32Array;
  /** This thread's rows in the current streak, and the epoch they belong to. */
  private mine: number[] = [];
  private myEpoch = 0;

  /** `shared`: the memory from another thread's watch.memory, or none for a new state. */
  constructor(
    private readonly threshold: number,
    shared?: SharedArrayBuffer,
  ) {
    this.cells = new Int32Array(shared ?? new SharedArrayBuffer(CELLS * Int32Array.BYTES_PER_ELEMENT));
  }

  /** Hand this to other threads (workerData) so they watch the same relay. */
  get memory(): SharedArrayBuffer {
    return this.cells.buffer as SharedArrayBuffer;
  }

  get paused(): boolean {
    return Atomics.load(this.cells, PAUSED) === 1;
  }

  /** Failures in a row so far (all threads). */
  get streak(): number {
    return Atomics.load(this.cells, STREAK);
  }

  /** A message went through: the relay is up. */
  delivered(): void {
    if (Atomics.load(this.cells, STREAK) === 0) return;
    Atomics.store(this.cells, STREAK, 0);
    Atomics.add(this.cells, EPOCH, 1);
  }

  /** A failure that says nothing about the relay (4xx/5xx for one message) ends the streak too. */
  answered(): void {
    this.delivered();
  }

  /** A connection failure for row `id`. True when this one reached the threshold (the caller pauses). */
  connectionFailed(id: number): boolean {
    this.syncEpoch();
    this.mine.push(id);
    return Atomics.add(this.cells, STREAK, 1) + 1 >= this.threshold;
  }

  /**
   * No answer after a whole message (the row became 'unknown', nothing to give back): counts toward the
   * streak like a connection failure. True when this one reached the threshold.
   */
  noAnswer(): boolean {
    this.syncEpoch();
    return Atomics.add(this.cells, STREAK, 1) + 1 >= this.threshold;
  }

  /** Pauses the run for every thread. True for the call that did it. */
  pause(): boolean {
    return Atomics.compareExchange(this.cells, PAUSED, 0, 1) === 0;
  }

  /** This thread's rows of the current streak, handed over once (to be given back when pausing). */
  takeMyStreak(): number[] {
    this.syncEpoch();
    const rows = this.mine;
    this.mine = [];
    return rows;
  }

  private syncEpoch(): void {
    const epoch = Atomics.load(this.cells, EPOCH);
    if (epoch !== this.myEpoch) {
      this.myEpoch = epoch;
      this.mine = [];
    }
  }
}
