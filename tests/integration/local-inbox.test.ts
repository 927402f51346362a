// The local inbox pages (no SMTP_URL): a caught message is listed for its recipient only, its page
// shows the unsubscribe headers a reader checks, and /inbox.json answers in the declared shape.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Inbox } from '../../src/mail/catcher.ts';
import { startWebHarness, type WebHarness } from '../helpers/web-harness.ts';

const RAW = [
  'From: digest@example.org',
  'To: Reader@Example.org, other@example.org',
  'Subject: Your papers',
  'Message-ID: <m1@example.org>',
  'List-Unsubscribe: <https://digest.example.org/unsubscribe/abc>',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Hello reader.',
  '',
].join('\r\n');

const TOKEN = 'inbox-token-for-tests';

describe('local inbox', () => {
  let h: WebHarness;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'digest-inbox-'));
    const inbox = new Inbox(dir);
    inbox.save(Buffer.from(RAW));
    h = await startWebHarness({ HOST: '127.0.0.1' }, undefined, { web: { inbox, inboxToken: TOKEN } });
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists a message for each of its recipients, whatever the case, and for no one else', async () => {
    const mine = (await (await fetch(`${h.base}/inbox.json?to=reader@example.org&token=${TOKEN}`)).json()) as Array<Record<string, unknown>>;
    expect(mine).toHaveLength(1);
    expect(Object.keys(mine[0]!).sort()).toEqual(['from', 'id', 'receivedAt', 'subject', 'to']);
    expect(mine[0]!.subject).toBe('Your papers');
    expect(await (await fetch(`${h.base}/inbox.json?to=other@example.org&token=${TOKEN}`)).json()).toHaveLength(1);
    expect(await (await fetch(`${h.base}/inbox.json?to=nobody@example.org&token=${TOKEN}`)).json()).toEqual([]);
    expect(await (await fetch(`${h.base}/inbox.json?token=${TOKEN}`)).json()).toHaveLength(1);

    const page = await (await fetch(`${h.base}/inbox/${String(mine[0]!.id)}?token=${TOKEN}`)).text();
    expect(page).toContain('<dt>list-unsubscribe</dt>');
    expect(page).toContain('https://digest.example.org/unsubscribe/abc');
    expect(page).not.toContain('<dt>subject</dt>');
  });
});
