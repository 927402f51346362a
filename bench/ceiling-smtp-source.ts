// Issue 41's ceiling, beside ours (bench/ceiling.ts): Postfix's smtp-source, a C load generator, sending N
// messages of the sampled digest's size into the same sink. The issue defines its target against this one
// ("smtp-source sending messages of the same size into the same sink as the ceiling"). Ours is stricter:
// the service's own pool sending one pre-built digest, which is what our sender could do with rendering free.
//
// How it is run, and why:
//   -s sessions   = the bench's SMTP pool size (SMTP_POOL_SIZE): as many connections as the service keeps
//                   (smtp-source has no pipelining, so its rate grows with sessions up to the cores: a
//                   ceiling at another connection count would compare two different senders; `--sweep`
//                   below measures how much -s moves it)
//   -d            messages reuse the connection, as the service's pool does (up to 1,000 per connection);
//                 without it every message opens a connection (`--no-reuse` in the sweep)
//   -l payload    the target size minus smtp-source's own header lines, so that the sink receives
//                 messages of the target's size (within 2 bytes: tests/integration/bench-smtp-source.test.ts)
//   -M host       a fixed host name in its Message-Id, so that the header length is known; but the last
//                 messages of a run with several sessions may carry 4 bytes more: their Message-Id's counter
//                 has run past zero, and smtp-source prints it as 8 hex digits (ffffffff), not 4
// Its CPU (user + system) is read with the shell's `times` after it exits.
//
// By hand, a sweep over sessions into a fresh smtp-sink:
//   npx tsx bench/ceiling-smtp-source.ts --bytes 46000 --messages 20000 --sessions 1,2,5,10,20 [--no-reuse]
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const SMTP_SOURCE = '/usr/sbin/smtp-source';
const HOST = 'bench.example';

export interface SmtpSourceOptions {
  /** smtp://host:port of the sink. */
  url: string;
  sessions: number;
  /** The size each message should arrive with (headers + body, as the sink counts DATA). */
  messageBytes: number;
  messages: number;
  from: string;
  to: string;
  subject: string;
  /** -d: keep each session's connection for the next message (the default, as the service's pool). */
  reuse?: boolean;
  /** The sink's CPU seconds so far (Postfix's smtp-sink, from /proc): its share per message. */
  sinkCpuSeconds?: () => number;
}

export interface SmtpSourceResult {
  messages: number;
  sessions: number;
  reuse: boolean;
  seconds: number;
  perSecond: number;
  /** The size asked for, and the -l payload that gives it. */
  messageBytes: number;
  payloadBytes: number;
  /** smtp-source's own CPU (user + system). */
  cpuSeconds: number;
  sinkCpuSeconds?: number;
}

/** The bytes smtp-source adds around its -l payload: its header lines and the last line's CRLF. */
export function smtpSourceOverhead(from: string, to: string, subject: string): number {
  const lines = [
    `From: <${from}>`,
    `To: <${to}>`,
    'Date: Mon,  7 Dec 2026 18:46:00 +0000 (UTC)', // fixed width (%e pads the day)
    `Message-Id: <0000.0000.0000@${HOST}>`,
    `Subject: ${subject}`,
    '',
  ];
  return lines.reduce((n, l) => n + Buffer.byteLength(l) + 2, 0) + 2;
}

export function smtpSourceArgs(o: Omit<SmtpSourceOptions, 'sinkCpuSeconds'>): { args: string[]; payloadBytes: number } {
  const u = new URL(o.url);
  const payloadBytes = Math.max(1, o.messageBytes - smtpSourceOverhead(o.from, o.to, o.subject));
  const args = [...(o.reuse === false ? [] : ['-d']), '-s', String(o.sessions), '-m', String(o.messages), '-l', String(payloadBytes)];
  args.push('-M', HOST, '-f', o.from, '-t', o.to, '-S', o.subject, `${u.hostname}:${u.port || 25}`);
  return { args, payloadBytes };
}

export async function measureSmtpSourceCeiling(o: SmtpSourceOptions): Promise<SmtpSourceResult> {
  if (!existsSync(SMTP_SOURCE)) throw new Error(`${SMTP_SOURCE} is missing (apt-get install postfix)`);
  const { args, payloadBytes } = smtpSourceArgs(o);
  const sinkBefore = o.sinkCpuSeconds?.();
  const started = performance.now();
  const times = await runWithTimes(SMTP_SOURCE, args);
  const seconds = (performance.now() - started) / 1000;
  return {
    messages: o.messages,
    sessions: o.sessions,
    reuse: o.reuse !== false,
    seconds,
    perSecond: o.messages / seconds,
    messageBytes: o.messageBytes,
    payloadBytes,
    cpuSeconds: times,
    ...(sinkBefore === undefined ? {} : { sinkCpuSeconds: o.sinkCpuSeconds!() - sinkBefore }),
  };
}

/** Runs the command under bash and resolves its CPU seconds (user + system, from `times`). */
function runWithTimes(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', '"$@"; rc=$?; times; exit $rc', 'bash', cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`smtp-source failed (${code}): ${err.trim()}`));
      // `times`: the shell's user and system time, then its children's.
      const children = out.trim().split('\n').at(-1) ?? '';
      const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce((s, m) => s + Number(m[1]) * 60 + Number(m[2]), 0);
      resolve(secs);
    });
  });
}

/** The report's lines for this ceiling: its rate, its CPU, and our rate's share of it and of the pool's. */
export function smtpSourceLines(s: SmtpSourceResult, ourRate: number, poolPerSecond: number): string[] {
  const perMsg = (sec: number) => ((sec * 1000) / s.messages).toFixed(3);
  return [
    `vs issue 41's ceiling (smtp-source -s ${s.sessions}${s.reuse ? ' -d' : ''}, ${s.messages} messages of ${Math.round(s.messageBytes / 1024)} KB, same sink): ` +
      `${Math.round(s.perSecond).toLocaleString('en-US')} messages/s, ${perMsg(s.cpuSeconds)} ms CPU per message in smtp-source` +
      (s.sinkCpuSeconds === undefined ? '' : ` + ${perMsg(s.sinkCpuSeconds)} in the sink`) +
      ` -> ours = ${((ourRate / s.perSecond) * 100).toFixed(0)}% of it (${((ourRate / poolPerSecond) * 100).toFixed(0)}% of the pool's)`,
  ];
}

async function sweep(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      bytes: { type: 'string', default: '46000' },
      messages: { type: 'string', default: '20000' },
      sessions: { type: 'string', default: '1,2,5,10,20' },
      'no-reuse': { type: 'boolean', default: false },
      rounds: { type: 'string', default: '1' },
    },
  });
  const { startPostfixSink } = await import('./postfix-sink.ts');
  const sink = await startPostfixSink();
  try {
    for (let r = 0; r < Number(v.rounds); r++) {
      for (const sessions of v.sessions.split(',').map(Number)) {
        const res = await measureSmtpSourceCeiling({
          url: sink.url,
          sessions,
          messageBytes: Number(v.bytes),
          messages: Number(v.messages),
          from: 'digest@bench.example',
          to: 'reader@bench.example',
          subject: 'Your paper digest',
          reuse: !v['no-reuse'],
          sinkCpuSeconds: () => sink.stats().cpuSeconds,
        });
        const ms = (sec: number) => ((sec * 1000) / res.messages).toFixed(3);
        console.log(
          `-s ${String(sessions).padStart(3)}${res.reuse ? ' -d' : '   '}: ${Math.round(res.perSecond)} msg/s; CPU ms per message: smtp-source ${ms(res.cpuSeconds)}, sink ${ms(res.sinkCpuSeconds ?? 0)}`,
        );
      }
    }
  } finally {
    sink.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await sweep();
