// A real SMTP server (smtp-server) for tests, scriptable per address and per attempt:
// accept (optionally slowly), reject with any code (421/451/550 …) at RCPT TO or after DATA,
// drop the connection (at RCPT TO, in the middle of the message, or after the final "." without keeping
// it), lose the answer to a message it DID keep (drop, or answer after the client's timeout: what makes a
// send ambiguous), refuse connections, and stop / start again on the same port.
// Received messages keep their raw bytes and are parsed with postal-mime on demand.
//
//   const sink = await SmtpSink.start();
//   sink.script = perAddress({ 'bob@example.org': [reject(451), accept()] });  // 451 once, then OK
//   … send to sink.url …
//   sink.countsByAddress(); await sink.messages[0].parse();
//   await sink.stop(); await sink.start();  // relay down, then back on the same port
//   await sink.close();
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import PostalMime, { type Email } from 'postal-mime';

export type SinkReply =
  | { action: 'accept'; delayMs?: number; until?: Promise<unknown> }
  | { action: 'reject'; code: number; text?: string; stage?: 'rcpt' | 'data'; delayMs?: number }
  | { action: 'drop'; stage?: DropStage; delayMs?: number }
  | { action: 'lost'; answer: 'drop' | 'late'; delayMs?: number };

/**
 * Where a drop happens: 'rcpt' at RCPT TO (before DATA), 'body' on the first bytes of the message (before
 * its final "."), 'data' after the final "." (the message is not kept).
 */
export type DropStage = 'rcpt' | 'body' | 'data';

export interface RecipientContext {
  address: string;
  /** How many times RCPT TO named this address so far, this one included (1-based). */
  attempt: number;
  /** RCPT TO commands seen for all addresses, this one included. */
  total: number;
}

/** Decides the fate of one recipient attempt; undefined = accept at once. */
export type SinkScript = (ctx: RecipientContext) => SinkReply | undefined;

/** 250 after delayMs; with `until`, not before that promise settles either (a test's gate). */
export const accept = (delayMs?: number, until?: Promise<unknown>): SinkReply => ({ action: 'accept', delayMs, until });
export const reject = (code: number, opts: { text?: string; stage?: 'rcpt' | 'data'; delayMs?: number } = {}): SinkReply => ({
  action: 'reject',
  code,
  ...opts,
});
export const drop = (stage: DropStage = 'data', delayMs?: number): SinkReply => ({ action: 'drop', stage, delayMs });
/**
 * The relay keeps the message (it counts as received) but its answer never arrives: 'drop' cuts the
 * connection right after the final "."; 'late' answers 250 after delayMs (set it past the client's timeout).
 */
export const lost = (answer: 'drop' | 'late' = 'drop', delayMs = 0): SinkReply => ({ action: 'lost', answer, delayMs });

/** Per-address plans: the n-th attempt gets plan[n-1]; attempts past the plan (and other addresses) are accepted. */
export function perAddress(plans: Record<string, SinkReply[]>, fallback?: SinkScript): SinkScript {
  const lower = new Map(Object.entries(plans).map(([k, v]) => [k.toLowerCase(), v]));
  return (ctx) => {
    const plan = lower.get(ctx.address.toLowerCase());
    if (plan) return plan[ctx.attempt - 1];
    return fallback?.(ctx);
  };
}

export interface SinkMessage {
  /** Envelope sender and recipients (what the client said, not the headers). */
  from: string;
  to: string[];
  raw: Buffer;
  receivedAt: Date;
  /** postal-mime parse of raw (cached). */
  parse(): Promise<Email>;
}

export interface SinkOptions {
  port?: number;
  script?: SinkScript;
  /** Reply to every new connection: drop it, or answer e.g. 421 in the greeting. */
  onConnect?: () => { action: 'drop' } | { action: 'reject'; code: number; text?: string } | undefined;
}

interface SessionState {
  reply: SinkReply | undefined;
}

function smtpError(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

export class SmtpSink {
  readonly messages: SinkMessage[] = [];
  script: SinkScript | undefined;
  onConnect: SinkOptions['onConnect'];
  /** RCPT TO attempts per lower-cased address. */
  readonly attempts = new Map<string, number>();
  private totalAttempts = 0;
  private server: SMTPServer | undefined;
  private readonly sessions = new Map<string, SessionState>();
  private waiters: Array<{ n: number; resolve: () => void }> = [];
  private _port: number;

  private constructor(opts: SinkOptions) {
    this._port = opts.port ?? 0;
    this.script = opts.script;
    this.onConnect = opts.onConnect;
  }

  static async start(opts: SinkOptions = {}): Promise<SmtpSink> {
    const sink = new SmtpSink(opts);
    await sink.start();
    return sink;
  }

  get port(): number {
    return this._port;
  }

  /** smtp://127.0.0.1:port */
  get url(): string {
    return `smtp://127.0.0.1:${this._port}`;
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  /** Listens (again) on the same port; the first start picks a free port. */
  async start(): Promise<void> {
    if (this.server) return;
    const server = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS', 'AUTH'],
      authOptional: true,
      hideSTARTTLS: true,
      size: 10 * 1024 * 1024,
      onConnect: (session, cb) => this.handleConnect(session, cb),
      onRcptTo: (address, session, cb) => this.handleRcpt(address.address, session, cb),
      onData: (stream, session, cb) => this.handleData(stream, session, cb),
      onClose: (session) => {
        this.sessions.delete(session.id);
      },
    });
    server.on('error', () => undefined); // client resets are expected in fault tests
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(this._port, '127.0.0.1', () => {
        server.server.off('error', reject);
        resolve();
      });
    });
    const address = server.server.address();
    if (address && typeof address === 'object') this._port = address.port;
    this.server = server;
  }

  /** Stops listening and cuts every open connection: clients see refused / dropped connections. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const c of server.connections) c._socket.destroy();
    await new Promise<void>((resolve) => server.server.close(() => resolve()));
  }

  async close(): Promise<void> {
    await this.stop();
  }

  /** Messages whose envelope names `address` (case-insensitive). */
  byAddress(address: string): SinkMessage[] {
    const a = address.toLowerCase();
    return this.messages.filter((m) => m.to.some((t) => t.toLowerCase() === a));
  }

  /** Delivered messages per lower-cased recipient address. */
  countsByAddress(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const m of this.messages) for (const t of m.to) counts.set(t.toLowerCase(), (counts.get(t.toLowerCase()) ?? 0) + 1);
    return counts;
  }

  attemptsFor(address: string): number {
    return this.attempts.get(address.toLowerCase()) ?? 0;
  }

  /** Resolves once `n` messages in total have been received; rejects after timeoutMs. */
  waitForMessages(n: number, timeoutMs = 10_000): Promise<void> {
    if (this.messages.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = { n, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`smtp-sink: ${this.messages.length} of ${n} messages after ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Forgets received messages and attempt counts (the script stays). */
  reset(): void {
    this.messages.length = 0;
    this.attempts.clear();
    this.totalAttempts = 0;
  }

  private handleConnect(session: SMTPServerSession, cb: (err?: Error | null) => void): void {
    const decision = this.onConnect?.();
    if (decision?.action === 'drop') {
      this.socketOf(session)?.destroy();
      return;
    }
    if (decision?.action === 'reject') return cb(smtpError(decision.code, decision.text ?? 'Service not available'));
    this.sessions.set(session.id, { reply: undefined });
    cb();
  }

  private handleRcpt(address: string, session: SMTPServerSession, cb: (err?: Error | null) => void): void {
    const key = address.toLowerCase();
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    this.totalAttempts++;
    const reply = this.script?.({ address, attempt, total: this.totalAttempts });
    const state = this.sessions.get(session.id) ?? { reply: undefined };
    this.sessions.set(session.id, state);
    state.reply = reply;
    const atRcpt = (reply?.action === 'reject' || reply?.action === 'drop') && (reply.stage ?? 'rcpt') === 'rcpt';
    if (!atRcpt) return cb();
    const act = () => {
      if (reply!.action === 'drop') this.socketOf(session)?.destroy();
      else if (reply!.action === 'reject') cb(smtpError(reply!.code, reply!.text ?? `${address}: scripted ${reply!.code}`));
    };
    if (reply!.delayMs) setTimeout(act, reply!.delayMs);
    else act();
  }

  private handleData(
    stream: NodeJS.ReadableStream,
    session: SMTPServerSession,
    cb: (err?: Error | null, message?: string) => void,
  ): void {
    const chunks: Buffer[] = [];
    let broken = false;
    const early = this.sessions.get(session.id)?.reply;
    const cutInBody = early?.action === 'drop' && early.stage === 'body';
    stream.on('data', (c: Buffer) => {
      chunks.push(c);
      if (cutInBody && !broken) {
        broken = true;
        this.socketOf(session)?.destroy(); // before the final ".": the client is still writing
      }
    });
    stream.on('error', () => {
      broken = true; // the client went away mid-message: nothing was delivered
    });
    stream.on('end', () => {
      if (broken) return;
      const reply = this.sessions.get(session.id)?.reply;
      if (reply?.action === 'lost') {
        // Kept (a real relay would have queued it), then the answer is lost.
        this.record(session, Buffer.concat(chunks));
        if (reply.answer === 'drop') {
          this.socketOf(session)?.destroy();
          return;
        }
        setTimeout(() => cb(null, `Ok: queued as ${this.messages.length} (late)`), reply.delayMs ?? 0);
        return;
      }
      const finish = () => {
        if (reply?.action === 'drop') {
          this.socketOf(session)?.destroy();
          return;
        }
        if (reply?.action === 'reject') {
          cb(smtpError(reply.code, reply.text ?? `scripted ${reply.code}`));
          return;
        }
        // The message counts as delivered when the 250 goes out: a client that died (kill -9) or a relay
        // stopped while the reply was pending means nothing was committed.
        const socket = this.socketOf(session);
        if (!socket || socket.destroyed) return;
        this.record(session, Buffer.concat(chunks));
        cb(null, `Ok: queued as ${this.messages.length}`);
      };
      const later = () => (reply?.delayMs ? setTimeout(finish, reply.delayMs) : finish());
      if (reply?.action === 'accept' && reply.until) void reply.until.then(later, later);
      else later();
    });
  }

  private record(session: SMTPServerSession, raw: Buffer): void {
    let parsed: Promise<Email> | undefined;
    const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    this.messages.push({
      from,
      to: session.envelope.rcptTo.map((r) => r.address),
      raw,
      receivedAt: new Date(),
      parse: () => (parsed ??= PostalMime.parse(raw)),
    });
    const ready = this.waiters.filter((w) => this.messages.length >= w.n);
    this.waiters = this.waiters.filter((w) => this.messages.length < w.n);
    for (const w of ready) w.resolve();
  }

  private socketOf(session: SMTPServerSession) {
    for (const c of this.server?.connections ?? []) if (c.id === session.id) return c._socket;
    return undefined;
  }
}
