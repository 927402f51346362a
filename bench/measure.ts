// Timing, memory and (optionally) CPU profiles of the benchmark's stages.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { summarise, type ProfileLine } from './profile-summary.ts';

export interface StageResult {
  name: string;
  seconds: number;
  /** Peak RSS of this process so far (MB), read when the stage ended. */
  peakRssMb: number;
  detail: string;
  /** Largest V8 heap in use and largest external memory (Buffers, ArrayBuffers) sampled during the stage (MB). */
  heapMb: number;
  externalMb: number;
  /** Top self-time entries when profiling. */
  profile?: { byOrigin: ProfileLine[]; byFunction: ProfileLine[]; file: string };
}

export function peakRssMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** Runs stages one after the other, timing each; with a profile directory, records a CPU profile per stage. */
export class StageClock {
  readonly stages: StageResult[] = [];
  private session: Session | undefined;

  constructor(private readonly profileDir: string | undefined, private readonly log: (line: string) => void) {}

  async run<T>(name: string, fn: () => T | Promise<T>, detail: (result: T, seconds: number) => string): Promise<T> {
    this.log(`… ${name}`);
    if (this.profileDir) await this.startProfile();
    let heap = 0;
    let external = 0;
    const sample = () => {
      const m = process.memoryUsage();
      heap = Math.max(heap, m.heapUsed);
      external = Math.max(external, m.external);
    };
    const sampler = setInterval(sample, 100);
    const started = performance.now();
    let result: T;
    try {
      result = await fn();
    } finally {
      clearInterval(sampler);
      sample();
    }
    const seconds = (performance.now() - started) / 1000;
    const stage: StageResult = {
      name,
      seconds,
      peakRssMb: peakRssMb(),
      heapMb: Math.round(heap / 2 ** 20),
      externalMb: Math.round(external / 2 ** 20),
      detail: detail(result, seconds),
    };
    if (this.profileDir) stage.profile = await this.stopProfile(name);
    this.stages.push(stage);
    this.log(`  ${name}: ${seconds.toFixed(2)} s  ${stage.detail}  (peak RSS so far ${stage.peakRssMb} MB, heap ${stage.heapMb} MB, external ${stage.externalMb} MB)`);
    return result;
  }

  seconds(name: string): number {
    return this.stages.find((s) => s.name === name)?.seconds ?? 0;
  }

  private async startProfile(): Promise<void> {
    if (!this.session) {
      this.session = new Session();
      this.session.connect();
      await this.session.post('Profiler.enable');
      await this.session.post('Profiler.setSamplingInterval', { interval: 500 });
    }
    await this.session.post('Profiler.start');
  }

  private async stopProfile(name: string): Promise<StageResult['profile']> {
    const { profile } = await this.session!.post('Profiler.stop');
    const file = join(this.profileDir!, `${name.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    const s = summarise(profile as unknown as Parameters<typeof summarise>[0], 12);
    return { byOrigin: s.byOrigin, byFunction: s.byFunction, file };
  }

  close(): void {
    this.session?.disconnect();
  }
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString('en-US'),
  rate: (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1)),
  s: (n: number) => (n >= 10 ? n.toFixed(1) : n.toFixed(2)),
};

/** min / median / p90 / max of a list of numbers (sorted in place). */
export function distribution(values: number[]): { mean: number; min: number; median: number; p90: number; max: number } {
  values.sort((a, b) => a - b);
  let sum = 0;
  for (const v of values) sum += v;
  const at = (q: number) => values[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;
  return { mean: values.length ? sum / values.length : 0, min: values[0] ?? 0, median: at(0.5), p90: at(0.9), max: values[values.length - 1] ?? 0 };
}
