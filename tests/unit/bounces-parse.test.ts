// VERP tags, the DSN / ARF reader and the chart renderer's escaping, on their own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderChart } from '../../src/admin/charts.ts';
import { parseReport } from '../../src/bounces/reports.ts';
import { Verp } from '../../src/bounces/verp.ts';
import { Tokens } from '../../src/tokens.ts';

const verp = new Verp('Bounces@Bounces.Example.org', new Tokens('unit-test-secret-0123456789abcdef0123456789'));
/** The ledger as the tags see it: digest 42 with its nonce, 43 with another, 7 planned before nonces. */
const nonces = new Map<number, number | null>([[42, 90071992547], [43, 5], [7, null]]);
const nonceOf = (id: number) => nonces.get(id);
const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'bounces', name), 'utf8')
    .replaceAll('{{ENVELOPE}}', verp.envelopeFor(42, 90071992547))
    .replaceAll('{{RECIPIENT}}', 'reader@example.com')
    .replaceAll('{{BOUNCE}}', 'bounces@bounces.example.org');

describe('VERP tags', () => {
  it('round-trip, whatever the case a mail system gives the address', () => {
    const a = verp.envelopeFor(42, 90071992547);
    expect(a).toMatch(/^bounces\+42-[0-9a-f]{32}@bounces\.example\.org$/);
    expect(verp.parse(a, nonceOf)).toEqual({ digestId: 42 });
    expect(verp.parse(`<${a.toUpperCase()}>`, nonceOf)).toEqual({ digestId: 42 });
  });

  it('refuse a changed id, a changed tag, another domain, another secret', () => {
    const a = verp.envelopeFor(42, 90071992547);
    expect(verp.parse(a.replace('+42-', '+43-'), nonceOf)).toBeNull();
    expect(verp.parse(a.replace(/-(.)/, (_m, c: string) => `-${c === 'a' ? 'b' : 'a'}`), nonceOf)).toBeNull();
    expect(verp.parse(a.replace('@bounces.example.org', '@example.org'), nonceOf)).toBeNull();
    const other = new Verp('bounces@bounces.example.org', new Tokens('another-secret-0123456789abcdef0123456789'));
    expect(other.parse(a, nonceOf)).toBeNull();
    expect(verp.parse('bounces@bounces.example.org', nonceOf)).toBeNull(); // the bare mailbox names no digest
    expect(verp.isBounceMailbox('bounces@bounces.example.org')).toBe(true);
    expect(verp.isBounceMailbox('bouncesx@bounces.example.org')).toBe(false);
  });

  it('fit only the row they were made for: same id with another nonce, or no row, is refused', () => {
    const a = verp.envelopeFor(42, 90071992547);
    expect(verp.parse(a, () => 90071992548)).toBeNull(); // id 42 reused by a later digest
    expect(verp.parse(a, () => undefined)).toBeNull(); // the row is gone
    expect(verp.parse(a, () => null)).toBeNull(); // not an id-only tag
    expect(verp.parse(verp.envelopeFor(42, null), nonceOf)).toBeNull(); // an id-only tag for a row with a nonce
  });

  it('id-only tags of rows planned before nonces still verify for that row', () => {
    const legacy = verp.envelopeFor(7, null);
    expect(verp.parse(legacy, nonceOf)).toEqual({ digestId: 7 });
    expect(verp.parse(legacy.replace('+7-', '+8-'), nonceOf)).toBeNull();
  });
});

describe('reading reports', () => {
  it('a Postfix 5.1.1 DSN is a hard bounce; its Return-Path carries the tag', async () => {
    const r = await parseReport(fixture('postfix-hard-5.1.1.eml'));
    expect(r.kind).toBe('hard');
    expect(r.status).toBe('5.1.1');
    expect(r.detail).toContain('User unknown in virtual mailbox table');
    expect(r.tagCandidates).toEqual([verp.envelopeFor(42, 90071992547)]);
  });

  it('a 4.2.2 given up on is soft; a delayed notice is nothing', async () => {
    expect((await parseReport(fixture('gmail-soft-4.2.2.eml'))).kind).toBe('soft');
    const delayed = await parseReport(fixture('postfix-delayed.eml'));
    expect(delayed.kind).toBe('ignore');
    expect(delayed.status).toBe('4.4.1');
  });

  it('an ARF abuse report is a complaint, tagged through Original-Mail-From first', async () => {
    const r = await parseReport(fixture('arf-abuse.eml'));
    expect(r.kind).toBe('complaint');
    expect(r.tagCandidates[0]).toBe(verp.envelopeFor(42, 90071992547));
  });

  it('a plain-text bounce without a delivery-status part is not guessed at', async () => {
    const raw = 'From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>\r\nSubject: Delivery Status Notification (Failure)\r\nContent-Type: text/plain\r\n\r\nDelivery to the following recipient failed permanently:\r\n\r\n     reader@example.com\r\n550 5.1.1 user unknown\r\n';
    expect((await parseReport(raw)).kind).toBe('ignore');
  });
});

describe('charts', () => {
  it('escape every label and draw one bar per non-zero day', () => {
    const svg = renderChart({ title: '<script>x</script>', days: ['2025-11-24', '2025-11-25'], kind: 'bars', series: [{ name: 'a"b', values: [0, 3], color: '#000' }] });
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('&lt;script&gt;');
    expect(svg).toContain('2025-11-25: 3 a&quot;b');
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(1);
  });
});
