// The mail a sender hands the mailer for one digest: the SQLite send loop (send-loop.ts) and the
// PostgreSQL worker (postgres/worker.ts) both build it here, so both send the same message for a row.
import { verpFrom } from '../bounces/verp.ts';
import { domainOf } from '../mail/smtp-mailer.ts';
import type { OutgoingMail } from '../mail/types.ts';
import type { RenderedEmail } from '../render/render.ts';
import type { LoadedDigest } from '../render/view.ts';

/** The settings a digest's headers and envelope come from. */
export interface DigestMailConfig {
  MAIL_FROM: string;
  UNSUBSCRIBE_MAILTO?: string | undefined;
  BOUNCE_ADDRESS?: string | undefined;
  SECRET_KEY?: string | undefined;
}

/** Builds each digest's mail: Message-ID, List-Unsubscribe, and the VERP envelope sender (BOUNCE_ADDRESS set). */
export class DigestMails {
  private readonly fromDomain: string;
  // Each digest's envelope sender carries its signed tag: bounces map back to the row.
  private readonly verp: ReturnType<typeof verpFrom>;

  constructor(private readonly config: DigestMailConfig) {
    this.fromDomain = domainOf(config.MAIL_FROM);
    this.verp = verpFrom(config);
  }

  of({ row, subscriber, view }: LoadedDigest, mail: RenderedEmail): DigestMail {
    return new DigestMail(
      subscriber.email,
      mail,
      `digest-${row.id}.${row.edition}@${this.fromDomain}`,
      { url: view.links.unsubscribe, mailto: this.config.UNSUBSCRIBE_MAILTO },
      this.verp?.envelopeFor(row.id, row.verpNonce),
    );
  }
}

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
