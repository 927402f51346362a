// A shareable web view: the "view in browser" link of a digest, sent over real SMTP, opens a page with
// the papers and nothing that acts for the reader or names them (no address, no preferences,
// unsubscribe, mute, feedback or follow link), and its token does nothing but read that digest. On both
// engines: on PostgreSQL the digest is planned and sent by the built `digest plan` and `digest worker`.
import { beforeAll, describe, expect, it } from 'vitest';
import { sendDueDigests } from '../helpers/engine-send.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { linkIn, sharedWebHarness } from '../helpers/web-harness.ts';

const READER = 'sharer@example.org';

forEachEngine('a web view link someone forwards', (engine) => {
  const { h, rowOn: row, subscribeAndConfirm } = sharedWebHarness({}, { engine });

  describe('a web view link someone forwards', () => {
    let webView: string;
    let feedbackLink: string;
    beforeAll(async () => {
      await subscribeAndConfirm(READER, ['mixture of experts', 'self-play']);
      expect(await sendDueDigests(h)).toBe(1);
      const mail = await h.smtp.waitFor(READER, 2);
      webView = h.local(linkIn(mail.text, '/digests/'));
      feedbackLink = linkIn(mail.text, '/feedback/');
    }, 120_000);

    it('shows the papers, and neither the address nor a link that acts for the reader', async () => {
      const r = await fetch(webView);
      expect(r.status).toBe(200);
      const page = await r.text();
      expect(page.replace(/<[^>]+>/g, '')).toContain('Mixture of experts at scale');
      expect(page).not.toContain(READER);
      expect(page).not.toContain('sharer');
      for (const path of ['/preferences/', '/unsubscribe/', '/mute/', '/feedback/', '/follow/', '/feed/']) expect(page, path).not.toContain(path);
    });

    it('its token cannot manage, unsubscribe, vote or follow', async () => {
      const token = new URL(webView).pathname.split('/')[2]!;
      expect((await fetch(`${h.base}/preferences/${token}`)).status).toBe(403);
      const post = (path: string, body = '') =>
        fetch(`${h.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      expect((await post(`/unsubscribe/${token}`, 'List-Unsubscribe=One-Click')).status).toBe(403);
      expect((await post(`/preferences/${token}`, 'topics=spam')).status).toBe(403);
      const [, , , paperId, direction] = new URL(feedbackLink).pathname.split('/');
      expect((await post(`/feedback/${token}/${paperId}/${direction}`)).status).toBe(403);
      expect((await post(`/follow/${token}/0/${paperId}`)).status).toBe(403);
      expect((await row(READER))!.status).toBe('confirmed');
      expect(await h.sql.get('SELECT count(*) AS n FROM topics t JOIN subscribers s ON s.id = t.subscriber_id WHERE s.email = ?', READER)).toEqual({ n: 2 });
    });
  });
});
