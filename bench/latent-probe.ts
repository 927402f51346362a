// Offline probe (bench only): does a latent space fitted on the 71 sample abstracts bring papers of one
// interest or theme closer than the tf-idf vectors do? For every paper of a group, the AUC of cosine
// (to it) at telling the other papers of its group from the rest; mean over the group's papers.
// `npx tsx bench/latent-probe.ts`
import { countStems } from '../src/match/like/terms.ts';
import { cosine, fitLatent, project, type SparseRows } from '../src/feedback/latent.ts';
import { buildCorpus, loadAbstracts, seededRandom } from './corpus.ts';
import { INTERESTS, LIKE_THEMES, studyPapers, type StudyPaper } from './relevance-study.ts';

export function tfidfRows(ps: Array<Pick<StudyPaper, 'title' | 'abstract'>>): SparseRows {
  const counts = ps.map((p) => countStems(p.title, p.abstract));
  const df = new Map<string, number>();
  for (const c of counts) for (const s of c.keys()) df.set(s, (df.get(s) ?? 0) + 1);
  const ids = new Map<string, number>();
  const rowStart = new Int32Array(ps.length + 1);
  const col: number[] = [];
  const val: number[] = [];
  counts.forEach((c, r) => {
    const ent: Array<[number, number]> = [];
    for (const [s, { tf }] of c) {
      const d = df.get(s)!;
      if (d < 2) continue;
      let t = ids.get(s);
      if (t === undefined) ids.set(s, (t = ids.size));
      ent.push([t, ((tf * 2.2) / (tf + 1.2)) * Math.log(1 + ps.length / d)]);
    }
    const n = Math.sqrt(ent.reduce((a, e) => a + e[1] ** 2, 0)) || 1;
    for (const [t, v] of ent) {
      col.push(t);
      val.push(v / n);
    }
    rowStart[r + 1] = col.length;
  });
  return { rows: ps.length, cols: ids.size, rowStart, col: Int32Array.from(col), val: Float32Array.from(val) };
}

function auc(scores: number[], rel: boolean[]): number {
  let right = 0;
  let pairs = 0;
  scores.forEach((s, i) => {
    if (!rel[i]) return;
    scores.forEach((t, j) => {
      if (rel[j]) return;
      pairs++;
      right += s > t ? 1 : s === t ? 0.5 : 0;
    });
  });
  return right / pairs;
}

if (process.argv[2] === '--time') {
  for (const k of process.argv.slice(4).map(Number)) console.log(JSON.stringify({ papers: Number(process.argv[3]), k, ...timeFit(Number(process.argv[3]), k) }));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const papers = studyPapers();
  const a = tfidfRows(papers);
  const sparse = (i: number) => {
    const v = new Float32Array(a.cols);
    for (let e = a.rowStart[i]!; e < a.rowStart[i + 1]!; e++) v[a.col[e]!] = a.val[e]!;
    return v;
  };
  const groups = [...INTERESTS.map((x) => ({ name: x.name, rule: x.rule })), ...LIKE_THEMES];
  const fits = new Map([10, 20, 30, 50].map((k) => [k, fitLatent(a, { k, seed: 7 })]));
  const latent = (k: number, i: number) => project(fits.get(k)!, a.col.subarray(a.rowStart[i]!, a.rowStart[i + 1]!), a.val.subarray(a.rowStart[i]!, a.rowStart[i + 1]!));
  // A blend: [tf-idf, beta x latent], unit length (the cosine is then a weighted mean of the two cosines).
  const blend = (k: number, beta: number, i: number) => {
    const x = sparse(i);
    const z = latent(k, i);
    const v = new Float32Array(x.length + z.length);
    v.set(x);
    z.forEach((zj, j) => (v[x.length + j] = beta * zj));
    const n = Math.sqrt(v.reduce((s, y) => s + y * y, 0));
    return v.map((y) => y / n);
  };
  const variants: Array<[string, (i: number) => Float32Array]> = [['tf-idf', sparse], ...[10, 20, 30, 50].map((k) => [`k=${k}`, (i: number) => latent(k, i)] as [string, (i: number) => Float32Array]),
    ...[10, 20, 50].flatMap((k) => [0.5, 1].map((b) => [`tfidf+${b}*k${k}`, (i: number) => blend(k, b, i)] as [string, (i: number) => Float32Array]))];
  for (const [name, vec] of variants) {
    const vecs = papers.map((_, i) => vec(i));
    const line = groups.map((g) => {
      const rel = papers.map((p) => g.rule.test(`${p.title} ${p.abstract}`));
      const per: number[] = [];
      papers.forEach((_, i) => {
        if (!rel[i]) return;
        const others = papers.map((__, j) => j).filter((j) => j !== i);
        per.push(auc(others.map((j) => cosine(vecs[i]!, vecs[j]!)), others.map((j) => rel[j]!)));
      });
      return `${g.name} ${(per.reduce((x, y) => x + y, 0) / per.length).toFixed(2)}`;
    });
    console.log(`${name}: ${line.join('  ')}`);
  }
}

/** `npx tsx bench/latent-probe.ts --time N K`: the fit's time on N papers (the bench corpus's mixes). */
export function timeFit(n: number, k: number): { ms: number; cpuMs: number; terms: number; nnz: number } {
  const papers = n <= 71 ? studyPapers().slice(0, n) : buildCorpus(loadAbstracts(), n, '2025-11-24', seededRandom(3)).papers;
  const a = tfidfRows(papers);
  const t = performance.now();
  const cpu = process.cpuUsage();
  fitLatent(a, { k, seed: 7 });
  const used = process.cpuUsage(cpu);
  return { ms: Math.round(performance.now() - t), cpuMs: Math.round((used.user + used.system) / 1000), terms: a.cols, nnz: a.val.length };
}
