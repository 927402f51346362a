// The bench's report lines that read a run's figures only (bench/run.ts prints them).
import type { SendSummary } from '../src/send/send-types.ts';
import { fmt, type StageClock } from './measure.ts';

/** Each sending thread's share of its time in GC, its heap limit and the most heap it used after a collection. */
export function gcLine(s: SendSummary): string {
  if (!s.gc?.length) return 'not reported';
  return s.gc
    .map(
      (t) =>
        `thread ${t.thread} ${((t.gcMs / Math.max(1, t.wallMs)) * 100).toFixed(1)}% (${fmt.s(t.gcMs / 1000)} of ${fmt.s(t.wallMs / 1000)} s, ${t.collections} collections` +
        (t.byKind ? `: minor ${fmt.s(t.byKind.minor / 1000)} s, major ${fmt.s(t.byKind.major / 1000)} s, incremental ${fmt.s(t.byKind.incremental / 1000)} s` : '') +
        `; heap limit ${t.heapLimitMb} MB, peak used ${t.peakUsedMb} MB)`,
    )
    .join('; ');
}

/** The CPU profile of each stage run with --profile: self time by package or file, then by function. */
export function printProfiles(stages: StageClock['stages']): void {
  for (const s of stages) {
    if (!s.profile) continue;
    console.log(`\nprofile of ${s.name} (${s.profile.file}), self time by package / file:`);
    for (const l of s.profile.byOrigin.slice(0, 8)) console.log(`  ${String(l.ms).padStart(7)} ms ${String(l.share).padStart(5)}%  ${l.name}`);
    console.log('  top functions:');
    for (const l of s.profile.byFunction.slice(0, 10)) console.log(`  ${String(l.ms).padStart(7)} ms ${String(l.share).padStart(5)}%  ${l.name}`);
  }
}

/** A target's line in the report: MET or MISS, then what it asks. */
export function target(ok: boolean, text: string): string {
  return `  ${ok ? 'MET ' : 'MISS'}  ${text}`;
}
