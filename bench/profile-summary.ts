// Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time by function and by package/file,
// so a benchmark note can say where the CPU went.
// Usage: tsx bench/profile-summary.ts <file.cpuprofile> [--top 25]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileLine {
  name: string;
  ms: number;
  share: number;
}

/** Where a script lives, shortened: the npm package, or the path inside the repo, or a node: module. */
export function origin(url: string): string {
  if (url === '') return '(native / V8)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const repo = /\/(src|bench)\/(.+)$/.exec(url);
  if (repo) return `${repo[1]}/${repo[2]}`;
  return url.replace(/^file:\/\//, '');
}

export function summarise(profile: CpuProfile, top = 25): { totalMs: number; byFunction: ProfileLine[]; byOrigin: ProfileLine[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const fn = new Map<string, number>();
  const org = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = origin(url);
    fn.set(`${functionName || '(anonymous)'} ${where}${url ? `:${lineNumber + 1}` : ''}`, (fn.get(`${functionName || '(anonymous)'} ${where}${url ? `:${lineNumber + 1}` : ''}`) ?? 0) + us);
    const key = functionName === '(garbage collector)' || functionName === '(idle)' || functionName === '(program)' ? functionName : where;
    org.set(key, (org.get(key) ?? 0) + us);
    total += us;
  }
  const lines = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: Math.round(us / 1000), share: Math.round((us / total) * 1000) / 10 }));
  return { totalMs: Math.round(total / 1000), byFunction: lines(fn), byOrigin: lines(org) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' } }, allowPositionals: true });
  for (const file of positionals) {
    const s = summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(values.top));
    console.log(`${file}: ${s.totalMs} ms sampled`);
    console.log('\nself time by package / file:');
    for (const l of s.byOrigin) console.log(`  ${String(l.ms).padStart(7)} ms ${String(l.share).padStart(5)}%  ${l.name}`);
    console.log('\nself time by function:');
    for (const l of s.byFunction) console.log(`  ${String(l.ms).padStart(7)} ms ${String(l.share).padStart(5)}%  ${l.name}`);
  }
}
