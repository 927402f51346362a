// The operator figures are computed once (src/report/figures.ts) and shown three ways: `digest status`,
// the console (overview and deliveries pages) and GET /metrics. On one seeded database whose events all
// fall within every view's window, the three must show the same numbers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cmdStatus } from '../../src/cli-commands.ts';
import { matchNew } from '../../src/pipeline.ts';
import { consoleCookie, startAdminHarness } from '../helpers/admin-setup.ts';
import { seedBatch } from '../helpers/seed.ts';
import type { WebHarness } from '../helpers/web-harness.ts';

const number = (text: string, re: RegExp): number => {
  const m = re.exec(text);
  if (!m) throw new Error(`${re} not found in:\n${text}`);
  return Number(m[1]);
};

describe('operator figures: digest status, the console and /metrics agree', () => {
  let h: WebHarness;

  beforeAll(async () => {
    // Three digests sent today, one soft bounce and one complaint (admin-setup), and carol overdue: a
    // paper of hers ingested three days ago that no digest carried.
    h = await startAdminHarness();
    seedBatch(h.tmp.db, '2025-11-22', [{ title: 'Diffusion models for video' }], 'hf', '2025-11-22T06:00:00.000Z');
    matchNew(h.tmp.db);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('shows the same overdue, bounce, complaint, sent and confirmation-email figures three ways', async () => {
    const out: string[] = [];
    expect(await cmdStatus(h.core, { out: (l) => out.push(l), err: (l) => out.push(l), isTTY: false }, 10)).toBe(0);
    const status = out.join('\n');

    const cookie = await consoleCookie(h.base);
    const overview = await (await fetch(`${h.base}/admin`, { headers: { cookie } })).text();
    const deliveries = await (await fetch(`${h.base}/admin/deliveries`, { headers: { cookie } })).text();
    const metrics = await (await fetch(`${h.base}/metrics`)).text();

    const overdue = number(status, /overdue: (\d+) subscribers? ha/);
    expect(overdue).toBe(1);
    expect(number(deliveries, /Overdue subscribers[^<]*<strong>(\d+)<\/strong>/)).toBe(overdue);
    expect(number(metrics, /^digest_overdue_subscribers (\d+)$/m)).toBe(overdue);

    const soft = number(status, /soft (\d+),/);
    const hard = number(status, /hard (\d+),/);
    const policy = number(status, /policy blocks (\d+);/);
    const complaints = number(status, /complaints (\d+) \(/);
    const sent = number(status, /% of (\d+) sent/);
    expect({ hard, soft, policy, complaints, sent }).toEqual({ hard: 0, soft: 1, policy: 0, complaints: 1, sent: 3 });

    expect(number(overview, /Bounces \(hard \/ soft\)<\/dt><dd>(\d+) \//)).toBe(hard);
    expect(number(overview, /Bounces \(hard \/ soft\)<\/dt><dd>\d+ \/ (\d+)/)).toBe(soft);
    expect(number(overview, /id="total-policy">(\d+)/)).toBe(policy);
    expect(number(overview, /id="complaint-rate">(\d+)/)).toBe(complaints);
    expect(number(overview, /id="total-sent">(\d+)/)).toBe(sent);
    const rate = /complaints \d+ \(([\d.]+)% of/.exec(status)![1];
    expect(overview).toContain(`(${rate}% of sent;`);

    expect(number(metrics, /^digest_bounces_total\{kind="hard"\} (\d+)$/m)).toBe(hard);
    expect(number(metrics, /^digest_bounces_total\{kind="soft"\} (\d+)$/m)).toBe(soft);
    expect(number(metrics, /^digest_bounces_total\{kind="policy"\} (\d+)$/m)).toBe(policy);
    expect(number(metrics, /^digest_complaints_total (\d+)$/m)).toBe(complaints);
    expect(number(metrics, /^digest_emails_sent_total (\d+)$/m)).toBe(sent);

    const noticesSent = number(status, /confirmation emails \(24 h\): sent (\d+)/);
    const noticesFailed = number(status, /confirmation emails \(24 h\): sent \d+, failed (\d+)/);
    expect(number(deliveries, /Confirmation emails \(last 24 hours\): (\d+) sent/)).toBe(noticesSent);
    expect(number(deliveries, /Confirmation emails \(last 24 hours\): \d+ sent, (\d+) failed/)).toBe(noticesFailed);
    expect(number(metrics, /^digest_confirmation_emails_total\{status="sent"\} (\d+)$/m)).toBe(noticesSent);
    expect(number(metrics, /^digest_confirmation_emails_total\{status="failed"\} (\d+)$/m)).toBe(noticesFailed);
  });
});
