// How much of a sending thread's time went to V8's garbage collector, from perf_hooks' 'gc' entries (one
// per collection, with its pause). A thread whose heap cap is too small for what it holds spends most of
// its time collecting long before it runs out of memory; the share says so without a profiler.
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

export interface ThreadGc {
  /** 0 = the run's main thread, 1.. = its worker threads. */
  thread: number;
  /** Wall time from the start of the thread's loop to its end (ms). */
  wallMs: number;
  /** Pauses of every collection in that time, summed (ms). */
  gcMs: number;
  collections: number;
  /** Of gcMs, by kind: scavenges of the young generation, full mark-compacts, incremental marking steps. */
  byKind: { minor: number; major: number; incremental: number; other: number };
  /** The thread's V8 heap limit (MB): its old-generation cap plus the young generation. */
  heapLimitMb: number;
  /** Most heap in use seen at the end of a collection (MB). */
  peakUsedMb: number;
}

/** Above this share of a thread's time in GC, the run warns: its heap is too small for what it holds. */
export const GC_SHARE_WARN = 0.1;

export class GcMeter {
  private readonly observer: PerformanceObserver;
  private readonly started = performance.now();
  private gcMs = 0;
  private collections = 0;
  private readonly byKind = { minor: 0, major: 0, incremental: 0, other: 0 };
  private peakUsed = 0;

  constructor(private readonly thread: number) {
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        this.gcMs += e.duration;
        this.collections++;
        const kind = (e as { detail?: { kind?: number } }).detail?.kind;
        if (kind === constants.NODE_PERFORMANCE_GC_MINOR) this.byKind.minor += e.duration;
        else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) this.byKind.major += e.duration;
        else if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) this.byKind.incremental += e.duration;
        else this.byKind.other += e.duration;
      }
      // Once per batch of entries: cheap, and close enough to each collection's end.
      this.peakUsed = Math.max(this.peakUsed, getHeapStatistics().used_heap_size);
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** Stops observing and returns the totals. */
  stop(): ThreadGc {
    this.observer.disconnect();
    return {
      thread: this.thread,
      wallMs: Math.round(performance.now() - this.started),
      gcMs: Math.round(this.gcMs),
      collections: this.collections,
      byKind: {
        minor: Math.round(this.byKind.minor),
        major: Math.round(this.byKind.major),
        incremental: Math.round(this.byKind.incremental),
        other: Math.round(this.byKind.other),
      },
      heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
      peakUsedMb: Math.round(this.peakUsed / 2 ** 20),
    };
  }
}

/** A thread's share of its time in GC (0-1). */
export function gcShare(t: Pick<ThreadGc, 'gcMs' | 'wallMs'>): number {
  return t.wallMs > 0 ? t.gcMs / t.wallMs : 0;
}
