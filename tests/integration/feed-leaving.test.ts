// A reader who leaves, leaves everywhere: their personal Atom feed answers 410 Gone once they
// unsubscribe (feed readers stop polling), and the preferences page's "New feed address" button ends the
// old feed URL while every other link keeps working. All over HTTP on a listening server, on both engines.
import { beforeAll, describe, expect, it } from 'vitest';
import { forEachEngine } from '../helpers/on-engines.ts';
import { sharedWebHarness } from '../helpers/web-harness.ts';

forEachEngine('leaving', (engine) => {
  const { h, rowOn: row, subscribeAndConfirm } = sharedWebHarness({}, { engine });

  const feedUrlIn = (html: string) => /<a href="([^"]+)" data-feed-url>/.exec(html)![1]!.replace(/&#x3D;/g, '=');

  describe('the personal feed', () => {
    let prefs: string;
    beforeAll(async () => {
      await subscribeAndConfirm('leaver@example.org', ['mixture of experts']);
      const s = (await row('leaver@example.org'))!;
      prefs = h.local(h.links.preferences({ id: s.id, tokenSalt: s.token_salt }));
    });

    it('gets a new address from the preferences page; the old one stops working, the page keeps working', async () => {
      const oldFeed = feedUrlIn(await (await fetch(prefs)).text());
      const before = await fetch(h.local(oldFeed));
      expect(before.status).toBe(200);
      expect(await before.text()).toContain('<feed xmlns="http://www.w3.org/2005/Atom">');

      const page = await (await fetch(prefs)).text();
      const action = /formaction="([^"]+)"/.exec(page)![1]!;
      const rotated = await fetch(`${h.base}${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'topics=mixture+of+experts',
      });
      expect(rotated.status).toBe(303);

      expect((await fetch(h.local(oldFeed))).status).toBe(403);
      const after = await fetch(prefs);
      expect(after.status).toBe(200);
      const newFeed = feedUrlIn(await after.text());
      expect(newFeed).not.toBe(oldFeed);
      const feed = await (await fetch(h.local(newFeed))).text();
      expect(feed).toContain(`<link rel="self" type="application/atom+xml" href="${newFeed}"/>`);
    });

    it('answers 410 Gone after the reader unsubscribes', async () => {
      const feed = feedUrlIn(await (await fetch(prefs)).text());
      expect((await fetch(h.local(feed))).status).toBe(200);
      const unsubscribe = prefs.replace('/preferences/', '/unsubscribe/');
      const left = await fetch(unsubscribe, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(left.status).toBe(200);
      expect((await row('leaver@example.org'))!.status).toBe('unsubscribed');
      const gone = await fetch(h.local(feed));
      expect(gone.status).toBe(410);
      expect(await gone.text()).not.toContain('<entry>');
    });
  });
});
