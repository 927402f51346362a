// The rendered digest email as the sender gets it: its bodies as encoded bytes (digest-email.ts wrote them
// into pooled arenas), decoded only when something reads .html or .text (tests, the local catcher).
import { AppError } from '../errors.ts';
import { decodeHtmlBody } from './encode/html-body.ts';
import { decodeQuotedPrintable } from './encode/qp-body.ts';
import type { RenderedEmail } from './digest-types.ts';

/**
 * A rendered email whose bodies are encoded bytes (text: quoted-printable; HTML: 7bit, or quoted-printable
 * of those 7bit bytes when they could not be laid out); .html and .text decode them when read.
 *
 * A class, its getters on the prototype, and it holds the two writers, not a closure. Decision: as an
 * object literal with getters and a `release` closure, a third of what a sending thread allocated was
 * promoted to the old generation.
 * Measured: BENCHMARKS.md § Why the code is shaped this way, encoded-email.ts.
 */
export class EncodedEmail implements RenderedEmail {
  private decoded: { html?: string; text?: string } = {};
  private released = false;

  constructor(
    readonly subject: string,
    readonly encoded: { html: Buffer[]; text: Buffer[]; htmlTransfer?: '7bit' | 'quoted-printable' },
    readonly shownPapers: number,
    readonly fullPapers: number,
    readonly htmlBytes: number,
    /** Given back by release(): the writers whose arenas the parts were cut from. */
    private readonly writers: ReadonlyArray<{ release(): void }> = [],
  ) {}

  get html(): string {
    return (this.decoded.html ??= this.read('html'));
  }

  get text(): string {
    return (this.decoded.text ??= this.read('text'));
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    for (const w of this.writers) w.release();
  }

  private read(part: 'html' | 'text'): string {
    if (this.released) throw new AppError('digest_released', `the ${part} of a digest email was read after it was released`);
    const encoded = this.encoded;
    if (part === 'text') return decodeQuotedPrintable(encoded.text);
    const bytes = encoded.htmlTransfer === '7bit' ? Buffer.concat(encoded.html) : Buffer.from(decodeQuotedPrintable(encoded.html), 'utf8');
    return encoded.htmlTransfer === undefined ? bytes.toString('utf8') : decodeHtmlBody(bytes);
  }
}
