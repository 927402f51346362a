// Renders one broad digest (200 papers, 3 topics) many times in this thread: `npx tsx bench/render-profile.ts`
// (with `node --cpu-prof --import tsx` for a profile). Prints ms per digest, split into render and MIME build.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createMessageBuilder } from '../src/mail/raw-message.ts';
import { createRenderer, type DigestPaperView } from '../src/render/render.ts';

const fixture = JSON.parse(readFileSync(new URL('../samples/daily-papers-sample.json', import.meta.url), 'utf8')) as {
  papers: Array<{ title: string; abstract: string; authors: string[] }>;
};
const topics = ['reinforcement learning', 'language models', 'video generation'];
// `--papers N`: a digest of the first N papers (default 200; up to any N, to show the work per digest does
// not grow with the papers it holds past those it shows).
const sizeArg = process.argv.indexOf('--papers');
const held = sizeArg > 0 ? Number(process.argv[sizeArg + 1]) : 200;
const papers: DigestPaperView[] = Array.from({ length: Math.max(200, held) }, (_, i) => {
  const f = fixture.papers[i % fixture.papers.length]!;
  return {
    title: f.title,
    url: `https://arxiv.org/abs/2511.${10000 + i}`,
    authors: f.authors,
    abstract: f.abstract,
    upvotes: i,
    categories: ['cs.LG'],
    publishedAt: '2025-11-24',
    matchedTopics: [{ text: topics[i % 3]!, muteUrl: `https://digest.example.org/mute/tok${i % 3}.abcdefabcdef` }],
    // Signed per reader and paper, as the loader makes them (their " · " separators are non-ASCII).
    feedback: {
      more: `https://digest.example.org/feedback/48213.paper-${i}.0.Qk3xZr8vY2mNwq4TfL0aHs7pJ9dKc1EuG6bVyXo5iRt/${i}/more`,
      less: `https://digest.example.org/feedback/48213.paper-${i}.0.Qk3xZr8vY2mNwq4TfL0aHs7pJ9dKc1EuG6bVyXo5iRt/${i}/less`,
      follow: f.authors[0] ? { url: `https://digest.example.org/follow/48213.paper-${i}.0.Qk3xZr8vY2mNwq4TfL0aHs7pJ9dKc1EuG6bVyXo5iRt/0/${i}`, name: f.authors[0] } : undefined,
    },
    runTopics: topics,
  };
});
const links = { preferences: 'https://d.example/p/tok', unsubscribe: 'https://d.example/u/tok', webView: 'https://d.example/w/tok', home: 'https://d.example/' };
const renderer = await createRenderer();
const builder = createMessageBuilder({ from: 'Digest <d@d.example>' });
const rounds = Number(process.argv[2] ?? 500);
const shown = papers.slice(0, held);
let renderMs = 0;
let buildMs = 0;
let bytes = 0;
// Process CPU time too: on the shared machine wall time counts waiting for a core (load average 5-7).
const cpu0 = process.cpuUsage();
for (let r = 0; r < rounds; r++) {
  const t0 = performance.now();
  const mail = renderer.digest({ email: `r${r}@x.example`, edition: '2025-11-25', papers: shown, links });
  const t1 = performance.now();
  const raw = builder.build({ to: `r${r}@x.example`, subject: mail.subject, html: '', text: '', encoded: mail.encoded }, `m${r}@d.example`, new Date()).raw;
  buildMs += performance.now() - t1;
  renderMs += t1 - t0;
  bytes += raw.length;
  mail.release?.();
}
const cpu = process.cpuUsage(cpu0);
console.log(
  `${shown.length} papers: render ${(renderMs / rounds).toFixed(3)} ms + build ${(buildMs / rounds).toFixed(3)} ms per digest (wall); ` +
    `CPU ${((cpu.user + cpu.system) / 1000 / rounds).toFixed(3)} ms per digest in all; ${Math.round(bytes / rounds / 1024)} KB`,
);
{
  const mail = renderer.digest({ email: 'x@x.example', edition: '2025-11-25', papers: shown, links });
  console.log(`parts: html ${mail.encoded!.html.length}, text ${mail.encoded!.text.length}; full ${mail.fullPapers}, shown ${mail.shownPapers}`);
}
