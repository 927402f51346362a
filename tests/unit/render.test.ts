// The renderer with the real templates, real MJML and the real topic highlighter, over papers from
// the recorded Hugging Face Daily Papers listing.
// Long digests and the clipping size: render-long-digests.test.ts.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, type DigestPaperView, type Renderer } from '../../src/render/render.ts';
import { DEFAULT_TEMPLATES_DIR } from '../../src/render/render-templates.ts';
import { digestView, LINKS, numberedPapers, papers, tidy, visible } from '../helpers/render-views.ts';

let renderer: Renderer;
beforeAll(async () => {
  renderer = await createRenderer();
});

describe('digest email', () => {
  it('lists every paper in both parts, with view-in-browser, preferences and unsubscribe links', () => {
    const list = papers(15);
    const email = renderer.digest(digestView(list));
    expect(email.shownPapers).toBe(15);
    const seen = tidy(visible(email.html));
    for (const p of list) {
      expect(seen).toContain(tidy(p.title));
      expect(email.html).toContain(`href="${p.url}"`);
      expect(email.text).toContain(tidy(p.title));
      expect(email.text).toContain(p.url);
    }
    expect(numberedPapers(email.text)).toBe(15);
    expect(email.html).toMatch(/<a href="https:\/\/digest\.example\.org\/digests\/tok-view"[^>]*>View in browser<\/a>/);
    expect(email.html).toMatch(/<a href="https:\/\/digest\.example\.org\/preferences\/tok-pref"[^>]*>Manage preferences<\/a>/);
    expect(email.html).toMatch(/<a href="https:\/\/digest\.example\.org\/unsubscribe\/tok-unsub"[^>]*>Unsubscribe<\/a>/);
    expect(email.text).toContain(`Manage preferences: ${LINKS.preferences}`);
    expect(email.text).toContain(`Unsubscribe: ${LINKS.unsubscribe}`);
    expect(seen).toContain('You get this email because ada@example.org subscribed');
    expect(email.html).not.toContain('more papers in this digest');
  });

  it('shows per paper: authors cut with et al., trimmed abstract, upvotes, categories, matched topics with mute links', () => {
    const [first] = papers(1, ['reinforcement learning', 'StarCraft']);
    const paper = { ...first!, upvotes: 42, authors: ['Ann Lee', 'Bo Chen', 'Cy Diaz', 'Di Ng', 'Ed Ode'] };
    const email = renderer.digest(digestView([paper]));
    const seen = tidy(visible(email.html));
    expect(seen).toContain('Ann Lee, Bo Chen, Cy Diaz et al.');
    expect(seen).not.toContain('Di Ng');
    expect(seen).toContain('▲ 42 upvotes · cs.LG, cs.AI · 2025-11-24');
    expect(seen).toContain('Matched: reinforcement learning mute');
    expect(seen).toContain('Matched: StarCraft mute');
    expect(email.html).toContain('href="https://digest.example.org/mute/tok-0"');
    expect(email.html).toContain('href="https://digest.example.org/mute/tok-1"');
    expect(email.text).toContain('Matched: reinforcement learning; StarCraft');
    // The 1,500-character abstract is its first sentences, at most ~300 characters, whole sentences, in both
    // parts (the whole abstract is on the web view).
    const shownAbstract = /This paper introduces SC2LE[^…]*…/.exec(seen)?.[0] ?? '';
    expect(shownAbstract.length).toBeGreaterThan(120);
    expect(shownAbstract.length).toBeLessThanOrEqual(302);
    expect(shownAbstract).toMatch(/\. …$/);
    expect(paper.abstract).toContain(shownAbstract.slice(0, -2));
    expect(email.text).toMatch(/StarCraft II game\. This\n   domain poses a new grand challenge[^…]*prior work\. …\n/);
  });

  it('highlights the matched words in title and abstract with an inline-styled span', () => {
    const [paper] = papers(1, ['reinforcement learning']);
    const email = renderer.digest(digestView([paper!]));
    const hits = [...email.html.matchAll(/<span class="pd-hl" style="background-color:[^"]+">([^<]*)<\/span>/g)].map(
      (m) => m[1],
    );
    expect(hits.length).toBeGreaterThanOrEqual(4);
    for (const hit of hits) expect(hit).toMatch(/^(reinforcement learning|reinforcement|learning)$/i);
    // In the title: "StarCraft II: A New Challenge for Reinforcement Learning"
    expect(email.html).toMatch(
      /Challenge for <span class="pd-hl"[^>]*>Reinforcement<\/span> <span class="pd-hl"[^>]*>Learning<\/span><\/a>/,
    );

    const unrelated = renderer.digest(digestView(papers(1, ['protein folding'])));
    expect(unrelated.html).not.toContain('class="pd-hl"');
  });

  it('one cached card per paper: each reader sees only the words of their own topics highlighted', () => {
    const [base] = papers(1, []);
    const runTopics = ['reinforcement learning', 'StarCraft'];
    const mute = 'https://digest.example.org/mute/tok-0';
    const hitsOf = (html: string) => [...html.matchAll(/<span class="pd-hl"[^>]*>([^<]*)<\/span>/g)].map((m) => m[1]!.toLowerCase());
    const before = renderer.cacheStats!();
    const a = renderer.digest(digestView([{ ...base!, matchedTopics: [{ text: 'StarCraft', muteUrl: mute }], runTopics }]));
    const b = renderer.digest(digestView([{ ...base!, matchedTopics: [{ text: 'Reinforcement  Learning', muteUrl: mute }], runTopics }]));
    const after = renderer.cacheStats!();
    expect(after.misses - before.misses).toBe(1); // built once, for both readers
    expect(hitsOf(a.html).length).toBeGreaterThan(0);
    for (const h of hitsOf(a.html)) expect(h).toBe('starcraft');
    expect(hitsOf(b.html).length).toBeGreaterThanOrEqual(4);
    for (const h of hitsOf(b.html)) expect(h).toMatch(/^(reinforcement|learning)$/);
    // A reader whose topic the card was not built with: rebuilt with it, highlighted all the same.
    const c = renderer.digest(digestView([{ ...base!, matchedTopics: [{ text: 'challenge', muteUrl: mute }], runTopics }]));
    expect(hitsOf(c.html)).toContain('challenge');
    for (const h of hitsOf(c.html)) expect(h).toMatch(/^challeng/);
  });

  it('the card cache stays within its bytes and keeps the cards readers keep asking for', async () => {
    const [a, b, c, d] = papers(4);
    // Each paper's entry size, from a cache with room for everything (the warm-up card is in both).
    const sizeOf = async (p: DigestPaperView) => {
      const r = await createRenderer({ cardCacheBytes: 1e9 });
      const before = r.cacheStats!().bytes;
      r.digest(digestView([p]));
      return r.cacheStats!().bytes - before;
    };
    const [sa, sb, sc, sd] = [await sizeOf(a!), await sizeOf(b!), await sizeOf(c!), await sizeOf(d!)];
    const budget = Math.max(sa + sb + sc, sa + sc + sd);
    expect(budget).toBeLessThan(sa + sb + sc + sd);
    const r = await createRenderer({ cardCacheBytes: budget });
    r.digest(digestView([a!])); // the warm-up card goes first when the budget needs room
    r.digest(digestView([b!]));
    r.digest(digestView([c!]));
    r.digest(digestView([a!])); // asked for again: a second chance
    r.digest(digestView([d!])); // over the budget: the oldest card not asked for again goes (b), not a
    const full = r.cacheStats!();
    expect(full.bytes).toBeLessThanOrEqual(budget);
    r.digest(digestView([a!]));
    r.digest(digestView([c!]));
    r.digest(digestView([d!]));
    expect(r.cacheStats!().misses).toBe(full.misses);
    r.digest(digestView([b!]));
    expect(r.cacheStats!().misses).toBe(full.misses + 1);
    expect(r.cacheStats!().bytes).toBeLessThanOrEqual(budget);
  });

  it('writes canonical feedback links exactly as checked ones, in the same bytes and within the same budget', async () => {
    // Links marked canonical skip the checks (safeHref, the 7bit writer's value test, the wire size); the
    // email must not change. A budget that cuts the email short shows the sizes are counted the same too.
    const withFeedback = (canonical: boolean) =>
      papers(60, ['reinforcement learning', 'MoE']).map((p, i) => ({
        ...p,
        feedback: {
          more: `https://digest.example.org/feedback/8bg.v8bg.4hYdPfykoNKNzG43vyAX1p/${900 + i}/more`,
          less: `https://digest.example.org/feedback/8bg.v8bg.4hYdPfykoNKNzG43vyAX1p/${900 + i}/less`,
          follow: i % 3 === 0 ? undefined : { url: `https://digest.example.org/follow/8bg.v8bg.4hYdPfykoNKNzG43vyAX1p/0/${900 + i}`, name: p.authors[0]! },
          canonical,
        },
      }));
    for (const htmlByteLimit of [102_000, 40_000]) {
      const r = await createRenderer({ htmlByteLimit });
      const checked = r.digest(digestView(withFeedback(false)));
      const canonical = r.digest(digestView(withFeedback(true)));
      expect(canonical.shownPapers).toBe(checked.shownPapers);
      expect(Buffer.concat(canonical.encoded!.html).equals(Buffer.concat(checked.encoded!.html))).toBe(true);
      expect(Buffer.concat(canonical.encoded!.text).equals(Buffer.concat(checked.encoded!.text))).toBe(true);
      expect(canonical.html).toContain('href="https://digest.example.org/feedback/8bg.v8bg.4hYdPfykoNKNzG43vyAX1p/900/more"');
    }
  });

  it('escapes feed strings and turns non-http(s) links into #', () => {
    const [base] = papers(1);
    const evil: DigestPaperView = {
      ...base!,
      title: '<script>alert(1)</script> Robust RL',
      url: 'javascript:alert(1)',
      authors: ['<img src=x onerror=alert(2)>'],
      abstract: 'Breaks "out" of attributes \' and <b>tags</b> & entities.',
      categories: ['cs.LG"><script>alert(3)</script>'],
      matchedTopics: [{ text: '<i>rl</i>', muteUrl: 'JavaScript:alert(4)' }],
    };
    const view = { ...digestView([evil]), links: { ...LINKS, webView: 'data:text/html,<script>alert(5)</script>' } };
    for (const html of [renderer.digest(view).html, renderer.webView(view)]) {
      expect(html).not.toMatch(/<script|<img|<b>tags|<i>rl/i);
      expect(html).not.toMatch(/javascript:|data:text/i);
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; Robust RL');
      expect(html).toMatch(/&lt;img src(&#61;|&#x3D;)x onerror(&#61;|&#x3D;)alert\(2\)&gt;/);
      expect(html).toContain('Breaks &quot;out&quot; of attributes &#39; and &lt;b&gt;tags&lt;/b&gt; &amp; entities.');
      expect(html).toMatch(/<a href="#"[^>]*>&lt;script&gt;/);
    }
    const text = renderer.digest(view).text;
    expect(text).toContain('<script>alert(1)</script> Robust RL'); // plain text shows it as typed
    expect(text).not.toMatch(/javascript:|data:text/i);
  });

  it('says count, first topics and date in a short subject', () => {
    const list = [
      ...papers(2, ['speculative decoding']),
      ...papers(1, ['MoE', 'speculative decoding']),
    ];
    expect(renderer.digest(digestView(list)).subject).toBe('3 new papers on speculative decoding, MoE — 2025-11-25');
    expect(renderer.digest(digestView(papers(1, ['diffusion']))).subject).toBe('1 new paper on diffusion — 2025-11-25');
    const many = papers(4, ['a very long topic about reinforcement learning from human feedback', 'MoE', 'ViT']);
    const subject = renderer.digest(digestView(many)).subject;
    expect(subject).toMatch(/^4 new papers on .+ and more — 2025-11-25$/);
    expect(subject.length).toBeLessThanOrEqual(100);
  });

  it('hides its preview text without white-on-white text (spam filters read that as hidden low-contrast text)', () => {
    const email = renderer.digest(digestView(papers(3)));
    const hidden = /<div class="pd-pre" style="([^"]*)">([^<]*)<\/div>/.exec(email.html);
    expect(hidden?.[2]).toBe(tidy(papers(1)[0]!.title));
    expect(hidden?.[1]).toContain('display:none');
    expect(hidden?.[1]).not.toMatch(/color/);
    // MJML's own preview (white 1 px text) is gone; the only white text is the button's, on blue.
    expect(email.html).not.toMatch(/color:#fff(fff)?;line-height:1px/i);
    expect(email.html.match(/color:#ffffff/gi)?.length ?? 0).toBeLessThanOrEqual(2);
  });

  it('is a responsive, dark-mode aware English email with no external images or fonts', () => {
    const { html } = renderer.digest(digestView(papers(3)));
    expect(html).toMatch(/<html lang="en"/);
    expect(html).toContain('<meta name="color-scheme" content="light dark">');
    expect(html).toContain('prefers-color-scheme: dark');
    expect(html).toContain('name="viewport"');
    expect(html).not.toMatch(/<img|<link|@import|url\(|fonts\.googleapis/i);
  });

  it('shows a paper as it is now after its title or abstract changed (no stale cached card)', () => {
    const [paper] = papers(1);
    renderer.digest(digestView([paper!]));
    const edited = { ...paper!, title: 'Corrected title v2', abstract: 'A corrected abstract.' };
    const email = renderer.digest(digestView([edited]));
    expect(email.html).toContain('Corrected title v2');
    expect(email.text).toContain('A corrected abstract.');
    expect(email.html).not.toContain('StarCraft');
  });

  it('refuses to render a digest with no papers', () => {
    expect(() => renderer.digest(digestView([]))).toThrow(/ada@example\.org \(2025-11-25\) has no papers/);
  });
});

describe('confirmation email', () => {
  it('asks to confirm, says how many topics (never their text: the requester chose it), links the confirm URL', () => {
    const email = renderer.confirm({
      email: 'new@example.org',
      confirmUrl: 'https://digest.example.org/confirm/tok-c',
      topicCount: 2,
      alreadySubscribed: false,
    });
    expect(email.subject).toBe('Confirm your subscription to Paper Digest');
    const seen = tidy(visible(email.html));
    expect(seen).toContain('Confirm your subscription');
    expect(seen).toContain('2 topics chosen: you will see them on the page the button opens');
    expect(email.text).toContain('2 topics chosen');
    expect(email.html).toMatch(/href="https:\/\/digest\.example\.org\/confirm\/tok-c"[^>]*>\s*Confirm subscription/);
    expect(email.text).toContain('Confirm subscription:\nhttps://digest.example.org/confirm/tok-c');
    expect(email.html).toMatch(/<html lang="en"/);
  });

  it('already subscribed: says so and gives the manage link, never the confirm link', () => {
    const email = renderer.confirm({
      email: 'old@example.org',
      confirmUrl: 'https://digest.example.org/confirm/tok-c',
      topicCount: 0,
      alreadySubscribed: true,
      manageUrl: 'https://digest.example.org/preferences/tok-m',
    });
    expect(email.subject).toMatch(/already subscribed/);
    expect(tidy(visible(email.html))).toContain('old@example.org is already subscribed');
    expect(email.text).toContain('old@example.org is already subscribed');
    expect(email.html).toMatch(/href="https:\/\/digest\.example\.org\/preferences\/tok-m"[^>]*>\s*Manage preferences/);
    expect(email.text).toContain('https://digest.example.org/preferences/tok-m');
    for (const part of [email.html, email.text]) expect(part).not.toContain('/confirm/');
  });
});

describe('templates', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'render-templates-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a broken template stops createRenderer with the file named', async () => {
    cpSync(DEFAULT_TEMPLATES_DIR, dir, { recursive: true });
    writeFileSync(join(dir, 'confirm.mjml'), '<mjml><mj-body><mj-section><mj-text>x</mj-text></mj-section></mj-body></mjml>');
    await expect(createRenderer({ templatesDir: dir })).rejects.toThrow(/confirm\.mjml is not valid MJML: .*mj-text/);

    cpSync(DEFAULT_TEMPLATES_DIR, dir, { recursive: true });
    writeFileSync(join(dir, 'digest.txt.hbs'), 'no card block here');
    await expect(createRenderer({ templatesDir: dir })).rejects.toThrow(/digest\.txt\.hbs has no \{\{#papers\}\}/);

    await expect(createRenderer({ templatesDir: join(dir, 'nope') })).rejects.toThrow(/nope.*cannot be read/);
  });
});
