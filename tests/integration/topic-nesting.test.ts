// No topic reaches a 500: queries nested deeper than FTS5's parser takes are refused by ours, with the
// position of the group that goes too deep, by the topic builder's preview and by subscribe (which
// stores nothing), and the deepest query we accept runs in the matcher. On both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_GROUP_DEPTH } from '../../src/match/parse.ts';
import { forEachEngine } from '../helpers/on-engines.ts';
import { jsonPost, startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

/** `a OR (b c OR (b c OR (… z)))`: OR and AND alternate, so nothing flattens. */
function nested(levels: number): string {
  let q = 'z';
  for (let i = 0; i < levels; i++) q = `a OR (b ${q})`;
  return q;
}

forEachEngine('topic nesting', (engine) => {
  let h: WebHarness;
  beforeAll(async () => {
    h = await startWebHarness({}, undefined, { engine });
  });
  afterAll(async () => {
    await h.close();
  });

  describe('nesting depth', () => {
    const deep = nested(17); // 172 characters: under the length limit
    // 1-based position of the first '(' past the limit.
    const at = deep.split('(').slice(0, MAX_GROUP_DEPTH + 1).join('(').length + 1;

    it('the preview answers with the position of the group too deep, not a 500', async () => {
      expect(deep.length).toBeLessThanOrEqual(200);
      const r = await fetch(`${h.base}/api/topics/preview?q=${encodeURIComponent(deep)}`);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({
        ok: false,
        error: `groups nested too deeply at position ${at} (at most ${MAX_GROUP_DEPTH} levels of parentheses)`,
        position: at,
      });
    });

    it('subscribe answers 400 naming the topic and the position, and stores nothing', async () => {
      const r = await fetch(`${h.base}/subscribe`, jsonPost({ email: 'deep@example.org', topics: ['diffusion', deep] }));
      expect(r.status).toBe(400);
      const body = (await r.json()) as { error: string; field: string };
      expect(body.field).toBe('topics');
      expect(body.error).toContain(`groups nested too deeply at position ${at}`);
      expect(await h.sql.get("SELECT count(*) AS n FROM subscribers WHERE email = 'deep@example.org'")).toEqual({ n: 0 });
    });

    it('the deepest query accepted runs in the preview', async () => {
      const r = await fetch(`${h.base}/api/topics/preview?q=${encodeURIComponent(nested(MAX_GROUP_DEPTH))}`);
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ ok: true });
    });
  });
});
