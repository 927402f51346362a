// What the rest of the service needs from a mail transport. The SMTP implementation lives in smtp-mailer.ts.

export interface OutgoingMail {
  to: string;
  subject: string;
  html: string;
  text: string;
  /** RFC 8058: becomes List-Unsubscribe (https URL, plus mailto when given) and List-Unsubscribe-Post. */
  listUnsubscribe?: { url: string; mailto?: string };
  /** Stable Message-ID (without angle brackets) so a row's message can be recognised. */
  messageId?: string;
  headers?: Record<string, string>;
  /**
   * The bodies already encoded (a digest's, joined from per-run card bytes: see render/encode/qp-body.ts, html-body.ts):
   * text quoted-printable; HTML as `htmlTransfer` says (default quoted-printable). When given, the SMTP
   * mailer sends these bytes and never reads `html` / `text`.
   */
  encoded?: { html: readonly Buffer[]; text: readonly Buffer[]; htmlTransfer?: '7bit' | 'quoted-printable' | undefined };
  /** SMTP envelope sender (MAIL FROM), e.g. a VERP bounce address; default: MAIL_FROM's address. */
  envelopeFrom?: string | undefined;
}

export interface SentMail {
  messageId: string;
  /** The server's final response line, e.g. "250 2.0.0 Ok: queued as ABC". */
  response: string;
}

export interface Mailer {
  /** Throws MailError on failure (temporary for 4xx / connection problems, permanent for 5xx). */
  send(mail: OutgoingMail): Promise<SentMail>;
  close(): Promise<void>;
}

/** The DKIM signing settings (DKIM_DOMAIN, DKIM_SELECTOR and a key), as src/config.ts reads them. */
export interface DkimConfig {
  domainName: string;
  keySelector: string;
  privateKey: string;
}
