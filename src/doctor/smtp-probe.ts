// `digest doctor`'s relay check: one SMTP conversation that stops before DATA. Connect, EHLO, TLS (smtps
// or STARTTLS, certificate checked unless the URL says otherwise), AUTH, MAIL FROM and RCPT TO, then RSET
// and QUIT: every step a send needs, and nothing delivered. nodemailer's SMTPConnection has no way to stop
// after RCPT TO (its send() always goes on to DATA), hence this small client; URLs are read by nodemailer's
// own parser, so the probe connects exactly as the mailer does.
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { parseSmtpUrl } from '../mail/smtp-url.ts';

export interface ProbeStep {
  step: 'connect' | 'tls' | 'auth' | 'mail from' | 'rcpt to';
  ok: boolean;
  /** What happened: the relay's reply or the connection error. */
  detail: string;
}

export interface ProbeOptions {
  url: string;
  /** Envelope sender and a recipient to try (neither receives anything: no DATA is sent). */
  from: string;
  to: string;
  timeoutMs: number;
  allowPlainAuth: boolean;
}

interface Reply {
  code: number;
  text: string;
}

/** Reads SMTP replies (multi-line "250-…" up to "250 …") from a socket that may be replaced by TLS. */
class ReplyReader {
  private buffer = '';
  private waiting: ((r: Reply | Error) => void) | undefined;
  private readonly lines: string[] = [];
  private failure: Error | undefined;

  attach(socket: Socket | TLSSocket): void {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl).replace(/\r$/, '');
        this.buffer = this.buffer.slice(nl + 1);
        this.lines.push(line);
        if (/^\d{3} /.test(line) || /^\d{3}$/.test(line)) this.settle();
      }
    });
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new Error('the relay closed the connection')));
  }

  private settle(): void {
    const lines = this.lines.splice(0);
    const code = Number(lines.at(-1)!.slice(0, 3));
    const reply = { code, text: lines.map((l) => l.slice(4)).join('\n').trim() };
    const w = this.waiting;
    this.waiting = undefined;
    w?.(reply);
  }

  private fail(e: Error): void {
    this.failure ??= e;
    const w = this.waiting;
    this.waiting = undefined;
    w?.(e);
  }

  next(timeoutMs: number): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting = (r) => {
        clearTimeout(timer);
        if (r instanceof Error) reject(r);
        else resolve(r);
      };
    });
  }
}

const line = (r: Reply) => `${r.code} ${r.text.replace(/\n/g, ' ')}`.trim();
const describe = (e: unknown) => {
  const err = e as NodeJS.ErrnoException;
  return err.code && !err.message.includes(err.code) ? `${err.code} ${err.message}` : String(err.message ?? e);
};

/** Runs the conversation; the steps done, the last one failed when the probe stopped early. */
export async function probeRelay(opts: ProbeOptions): Promise<ProbeStep[]> {
  // The mailer's own reading of SMTP_URL (ports 465 / 587 by default, options checked).
  const { endpoint, auth } = parseSmtpUrl(opts.url);
  const url = { ...endpoint, auth };
  const { host, port } = endpoint;
  const steps: ProbeStep[] = [];
  const reader = new ReplyReader();
  let socket: Socket | TLSSocket | undefined;
  const send = async (command: string): Promise<Reply> => {
    socket!.write(`${command}\r\n`);
    return reader.next(opts.timeoutMs);
  };
  const failed = (step: ProbeStep['step'], detail: string) => {
    steps.push({ step, ok: false, detail });
    return steps;
  };
  try {
    // SNI takes a host name only (RFC 6066); the certificate is still checked against an IP address.
    const tlsOptions: ConnectionOptions = { ...(isIP(host) ? {} : { servername: host }), ...url.tls };
    try {
      socket = await open(() => (url.secure ? tlsConnect({ host, port, ...tlsOptions }) : netConnect({ host, port })), url.secure ? 'secureConnect' : 'connect', opts.timeoutMs);
      reader.attach(socket);
      const greeting = await reader.next(opts.timeoutMs);
      if (greeting.code !== 220) return failed('connect', `${host}:${port} greeted with ${line(greeting)}`);
      steps.push({ step: 'connect', ok: true, detail: `${host}:${port} answered ${line(greeting).slice(0, 80)}` });
    } catch (e) {
      return failed(url.secure ? 'tls' : 'connect', `${host}:${port}: ${describe(e)}`);
    }
    const name = url.name ?? 'localhost';
    let ehlo = await send(`EHLO ${name}`);
    if (ehlo.code !== 250) return failed('connect', `EHLO refused: ${line(ehlo)}`);
    if (url.secure) steps.push({ step: 'tls', ok: true, detail: `smtps, certificate ${certificateNote(socket as TLSSocket)}` });
    else if (/\bSTARTTLS\b/i.test(ehlo.text)) {
      const go = await send('STARTTLS');
      if (go.code !== 220) return failed('tls', `STARTTLS refused: ${line(go)}`);
      try {
        const plain = socket;
        plain.removeAllListeners('data');
        socket = await open(() => tlsConnect({ socket: plain, ...tlsOptions }), 'secureConnect', opts.timeoutMs);
      } catch (e) {
        return failed('tls', `STARTTLS: ${describe(e)}`);
      }
      reader.attach(socket);
      steps.push({ step: 'tls', ok: true, detail: `STARTTLS, certificate ${certificateNote(socket as TLSSocket)}` });
      ehlo = await send(`EHLO ${name}`);
      if (ehlo.code !== 250) return failed('tls', `EHLO after STARTTLS refused: ${line(ehlo)}`);
    } else steps.push({ step: 'tls', ok: true, detail: 'none: the relay offers no STARTTLS and the URL is not smtps:// (mail travels in clear)' });

    const encrypted = Boolean((socket as TLSSocket).encrypted);
    if (url.auth?.user) {
      if (!encrypted && !opts.allowPlainAuth) {
        return failed('auth', 'refused to send the password in clear (no TLS): use smtps:// or a relay with STARTTLS, or set SMTP_ALLOW_PLAIN_AUTH=true');
      }
      const auth = await login(send, ehlo.text, url.auth.user, url.auth.pass ?? '');
      if (auth.code !== 235) return failed('auth', `${url.auth.user}: ${line(auth)}`);
      steps.push({ step: 'auth', ok: true, detail: `logged in as ${url.auth.user}${encrypted ? '' : ' (in clear: SMTP_ALLOW_PLAIN_AUTH=true)'}` });
    } else steps.push({ step: 'auth', ok: true, detail: 'no user in SMTP_URL: not logging in' });

    const mail = await send(`MAIL FROM:<${opts.from}>`);
    if (mail.code !== 250) return failed('mail from', `<${opts.from}>: ${line(mail)}`);
    steps.push({ step: 'mail from', ok: true, detail: `<${opts.from}> accepted` });
    const rcpt = await send(`RCPT TO:<${opts.to}>`);
    if (rcpt.code !== 250 && rcpt.code !== 251) return failed('rcpt to', `<${opts.to}>: ${line(rcpt)}`);
    steps.push({ step: 'rcpt to', ok: true, detail: `<${opts.to}> accepted (no DATA sent: nothing delivered)` });
    await send('RSET').catch(() => undefined);
    socket.write('QUIT\r\n');
    return steps;
  } catch (e) {
    const next = (['connect', 'tls', 'auth', 'mail from', 'rcpt to'] as const).find((s) => !steps.some((d) => d.step === s)) ?? 'rcpt to';
    return failed(next, describe(e));
  } finally {
    socket?.destroySoon?.();
    setTimeout(() => socket?.destroy(), 200).unref();
  }
}

/** AUTH PLAIN, or AUTH LOGIN when that is all the relay offers. */
async function login(send: (c: string) => Promise<Reply>, ehlo: string, user: string, pass: string): Promise<Reply> {
  const b64 = (v: string) => Buffer.from(v).toString('base64');
  const offered = /\bAUTH[ =]([^\n]*)/i.exec(ehlo)?.[1]?.toUpperCase() ?? '';
  if (!/\bPLAIN\b/.test(offered) && /\bLOGIN\b/.test(offered)) {
    const asked = await send('AUTH LOGIN');
    if (asked.code !== 334) return asked;
    const named = await send(b64(user));
    return named.code === 334 ? send(b64(pass)) : named;
  }
  return send(`AUTH PLAIN ${b64(`\0${user}\0${pass}`)}`);
}

function certificateNote(s: TLSSocket): string {
  const cert = s.getPeerCertificate();
  const until = cert?.valid_to ? `valid until ${new Date(cert.valid_to).toISOString().slice(0, 10)}` : 'presented';
  return s.authorized ? `trusted, ${until}` : `NOT checked (tls.rejectUnauthorized=false in SMTP_URL), ${until}`;
}

/** A connected socket once `ready` fires, or the connection error (a refused TLS certificate included). */
function open<S extends Socket>(make: () => S, ready: 'connect' | 'secureConnect', timeoutMs: number): Promise<S> {
  return new Promise((resolve, reject) => {
    const s = make();
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no connection within ${timeoutMs} ms`));
    }, timeoutMs);
    s.once(ready, () => {
      clearTimeout(timer);
      s.removeAllListeners('error');
      resolve(s);
    });
    s.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
