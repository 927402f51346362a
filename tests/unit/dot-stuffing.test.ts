// The fast dot-stuffing (src/mail/dot-stuffing.ts) must put on the wire exactly what nodemailer's own
// DataStream does, for any bytes split into any chunks: a difference is a corrupted or smuggled message.
import { describe, expect, it } from 'vitest';
// Not in nodemailer's exports map: read from its file, as the reference implementation.
import DataStream from '../../node_modules/nodemailer/dist/esm/smtp-connection/data-stream.js';
import { dotStuff, dotStuffMessage } from '../../src/mail/dot-stuffing.ts';

/** What DataStream keeps between chunks: the last byte seen (false before the first). */
interface DotStuffState {
  lastByte: number | false;
  inByteCount: number;
  outByteCount: number;
}

/** Ours as DataStream's `_transform` (same state, same output): chunk by chunk, the byte before each known. */
function dotStuffTransform(this: DotStuffState & { push(chunk: Buffer): boolean }, chunk: Buffer, _e: BufferEncoding, done: () => void): void {
  if (chunk.length === 0) return done();
  this.inByteCount += chunk.length;
  const out = dotStuff(chunk, this.lastByte);
  this.outByteCount += out.length;
  this.push(out);
  this.lastByte = chunk[chunk.length - 1]!;
  done();
}

type Transformish = { _transform(c: Buffer, e: BufferEncoding, d: () => void): void; _flush(d: () => void): void };

/** Runs chunks through a DataStream (ours swapped in when `fast`) and returns every byte it pushed. */
function run(chunks: Buffer[], fast: boolean): Buffer {
  const stream = new (DataStream as unknown as new () => Transformish & DotStuffState & { push(b: Buffer): boolean })();
  const out: Buffer[] = [];
  stream.push = (b: Buffer) => (out.push(Buffer.from(b)), true);
  if (fast) stream._transform = dotStuffTransform;
  for (const c of chunks) stream._transform(c, 'latin1', () => {});
  stream._flush(() => {});
  expect(stream.inByteCount).toBe(chunks.reduce((n, c) => n + c.length, 0));
  expect(stream.outByteCount).toBe(Buffer.concat(out).length);
  return Buffer.concat(out);
}

/** A deterministic PRNG so a failure names a reproducible seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('dot-stuffing', () => {
  it('matches nodemailer on the hard cases: leading dots, bare CR and LF, CR before a dot, split across chunks', () => {
    const cases = ['.', '..', '.\r\n.', 'a\n.b', 'a\r.b', 'a\rb', '\r', '\n', '\r\r\n', '\n\n..\r\r', 'x\r\n.\r\n', 'end\r'];
    for (const c of cases) {
      const bytes = Buffer.from(c);
      expect(run([bytes], true).toString('latin1'), JSON.stringify(c)).toBe(run([bytes], false).toString('latin1'));
      // Every split point, so the byte before a chunk comes from the previous one.
      for (let at = 1; at < bytes.length; at++) {
        const split = [bytes.subarray(0, at), bytes.subarray(at)];
        expect(run(split, true).equals(run(split, false)), `${JSON.stringify(c)} split at ${at}`).toBe(true);
      }
    }
  });

  it('matches nodemailer on 2,000 random messages made of CR, LF, dots and text, randomly chunked', () => {
    const alphabet = ['\r', '\n', '.', 'a', '\r\n', '=\r\n', '=2E'];
    for (let seed = 1; seed <= 2_000; seed++) {
      const r = rng(seed);
      let text = '';
      const n = Math.floor(r() * 60);
      for (let i = 0; i < n; i++) text += alphabet[Math.floor(r() * alphabet.length)];
      const bytes = Buffer.from(text, 'latin1');
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + Math.floor(r() * 8);
        chunks.push(bytes.subarray(at, at + size));
        at += size;
      }
      expect(run(chunks, true).equals(run(chunks, false)), `seed ${seed}: ${JSON.stringify(text)}`).toBe(true);
    }
  });

  it('hands back a well-formed CRLF message unchanged (no copy) and ends it with CRLF.CRLF', () => {
    const body = Buffer.from('Subject: x\r\n\r\nline one\r\n=2Eline two\r\n');
    const out = run([body], true);
    expect(out.toString()).toBe(`${body.toString()}.\r\n`);
  });
});

describe('dot-stuffing a whole message (what data-phase.ts writes for a message that is one Buffer)', () => {
  /** What nodemailer's DataStream writes for the message in one chunk, terminator cut off. */
  const reference = (bytes: Buffer) => {
    const out = run([bytes], false);
    const last = bytes.length > 0 ? bytes[bytes.length - 1] : undefined;
    return out.subarray(0, out.length - (last === 0x0a ? 3 : last === 0x0d ? 4 : 5));
  };

  it("writes what nodemailer's stream writes: 10,000 random messages", () => {
    const alphabet = ['\r', '\n', '.', 'a', '\r\n', '=\r\n', '=2E', 'bcdefghijklmnopqrstuvwxyz0123456789', '\r\n.', '\t'];
    for (let seed = 1; seed <= 10_000; seed++) {
      const r = rng(seed);
      let text = '';
      const n = Math.floor(r() * 90);
      // Half the messages are well-formed CRLF lines with one odd byte sequence somewhere (or none).
      if (seed % 2 === 0) {
        for (let i = 0; i < n; i++) text += i % 7 === 6 ? '\r\n' : 'abcdefghij'[Math.floor(r() * 10)];
        const odd = ['', '', '.', '\r', '\n', '\n.', '\r.', '\r\n.'][Math.floor(r() * 8)]!;
        const at = Math.floor(r() * (text.length + 1));
        text = text.slice(0, at) + odd + text.slice(at);
      } else {
        for (let i = 0; i < n; i++) text += alphabet[Math.floor(r() * alphabet.length)];
      }
      const bytes = Buffer.from(text, 'latin1');
      expect(dotStuffMessage(bytes).equals(reference(bytes)), `seed ${seed}: ${JSON.stringify(text)}`).toBe(true);
    }
  });

  it('hands a 228 KB message with nothing to stuff back as it is (no copy), and stuffs one odd byte anywhere', () => {
    const line = Buffer.from(`${'x'.repeat(74)}\r\n`);
    const clean = Buffer.concat(Array.from({ length: 3000 }, () => line));
    expect(dotStuffMessage(clean)).toBe(clean);
    for (const at of [0, 1, 65_535, 65_536, 131_072, clean.length - 1]) {
      for (const odd of ['.', '\r', '\n']) {
        const bytes = Buffer.from(clean);
        if (odd === '.') {
          bytes[at] = 0x0a;
          if (at > 0) bytes[at - 1] = 0x0d;
          if (at + 1 < bytes.length) bytes[at + 1] = 0x2e;
        } else bytes[at] = odd.charCodeAt(0);
        expect(dotStuffMessage(bytes).equals(reference(bytes)), `${JSON.stringify(odd)} at ${at}`).toBe(true);
      }
    }
  });
});
