// The mail a send loop hands the mailer for one digest (send-loop.ts).
import type { OutgoingMail } from '../mail/types.ts';
import type { RenderedEmail } from '../render/render.ts';

/**
 * A digest as the mailer gets it. The SMTP mailer sends `encoded` (bytes joined from the run's card cache)
 * and never reads html/text; a mailer that does (tests, the local catcher) gets the decoded text.
 * A class with its getters on the prototype, not an object literal with `get html()` closing over the
 * lane's scope: such a literal kept the loaded digest and its rendered email alive past their scavenge
 * (see EncodedEmail in render/encoded-email.ts for the measurement).
 */
export class DigestMail implements OutgoingMail {
  readonly subject: string;
  readonly encoded: RenderedEmail['encoded'];

  constructor(
    readonly to: string,
    private readonly mail: RenderedEmail,
    readonly messageId: string,
    readonly listUnsubscribe: { url: string; mailto?: string | undefined },
    readonly envelopeFrom: string | undefined,
  ) {
    this.subject = mail.subject;
    this.encoded = mail.encoded;
  }

  get html(): string {
    return this.mail.html;
  }

  get text(): string {
    return this.mail.text;
  }
}
