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
 * A class, its getters on the prototype, and it holds the two writers, not a closure. Decision, measured:
 * as an object literal with `get html()`/`get text()` and a `release` closure over renderDigestEmail's
 * scope, about a third of everything a sending thread allocated survived its first scavenge and was
 * promoted to the old generation (`node --trace-gc-nvp`: 4.2 of 12.6 MB per scavenge, the same with
 * 2 MB or 32 MB semi-spaces, in a loop that keeps nothing from one digest to the next); the old
 * generation then filled every ~250 ms and was marked and compacted. Cut out step by step, it came and
 * went with this object alone (returning {} after building it kept the survival; returning {} just before
 * did not). Our reading, not pinned down in V8's sources: something of the per-instance accessors is held
 * from the old generation, so the closures, their scope and through it every card, view and Buffer view
 * of the digest outlived their scavenge. With this class: 0.3% survives, and rendering alone went 0.378 ->
 * 0.262 ms of CPU per friendly digest (`npx tsx bench/render-profile.ts 3000 --papers 18`).
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
