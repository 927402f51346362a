// CPU per message of the send path alone: `npx tsx bench/smtp-send.ts [--messages 4000] [--rounds 5]`.
// One realistic digest (rendered by src/render, built by src/mail/raw-message.ts as the mailer builds it:
// 20 full cards with the bundled sample's abstracts, ~66 KB) sent over and over through our pool
// (src/mail/smtp-pool.ts: our SMTP client, the data phase, dot-stuffing) to a relay in ANOTHER process
// (Postfix's smtp-sink by default; `--sink node` forks bench/sink.ts), so that the CPU this process spends
// (process.cpuUsage: user + system, the kernel taking the bytes included) is the send path's own. Each
// round sends --messages messages with --pool sends in flight; prints µs of CPU per message per round and
// the median. `--dots` makes every 7th line of the message start with '.' (the stuffing path). Figures
// and what they showed: src/mail/data-phase.ts. The CPU time is the measure: the machine is shared, so
// compare runs made one after the other (before / after alternating), never wall time.
//   --profile FILE  writes a V8 CPU profile of the last round (summarise: npx tsx bench/profile-summary.ts FILE)
import { fork } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { createMessageBuilder } from '../src/mail/raw-message.ts';
import { SmtpPool } from '../src/mail/smtp-pool.ts';
import { createRenderer } from '../src/render/render.ts';
import { sampleDigest } from './sample-digest.ts';
import { POSTFIX_SMTP_SINK, startPostfixSink } from './postfix-sink.ts';
import type { SinkMessage } from './sink.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '5' },
    pool: { type: 'string', default: '5' },
    papers: { type: 'string', default: '20' },
    sink: { type: 'string', default: existsSync(POSTFIX_SMTP_SINK) ? 'postfix' : 'node' },
    dots: { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
});
const MESSAGES = Number(values.messages);
const ROUNDS = Number(values.rounds);
const POOL = Number(values.pool);

// --- the message (bench/sample-digest.ts)
const view = sampleDigest(Number(values.papers));
const renderer = await createRenderer();
const mail = renderer.digest(view);
let raw = Buffer.from(
  createMessageBuilder({ from: 'Paper Digest <digest@digest.example.org>' }).build(
    { to: view.email, subject: mail.subject, html: '', text: '', encoded: mail.encoded, listUnsubscribe: { url: view.links.unsubscribe } },
    'digest-1.2025-11-25@digest.example.org',
    new Date(),
  ).raw,
);
mail.release?.();
if (values.dots) {
  const lines = raw.toString('latin1').split('\r\n');
  raw = Buffer.from(lines.map((l, i) => (i > 20 && i % 7 === 0 ? `.${l}` : l)).join('\r\n'), 'latin1');
}

// --- the relay, in another process
let url: string;
let stopSink: () => void;
if (values.sink === 'postfix') {
  const sink = await startPostfixSink();
  url = sink.url;
  stopSink = () => sink.stop();
} else {
  const child = fork(new URL('./sink.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) => child.on('message', (m: SinkMessage) => m.type === 'listening' && resolve(m.port)));
  url = `smtp://127.0.0.1:${port}`;
  stopSink = () => child.send('stop');
}

// --- the sends
const pool = new SmtpPool({ url, poolSize: POOL, timeoutMs: 30_000, maxMessages: 1000, maxRequeues: 2 });
const envelope = { from: 'digest@digest.example.org', to: [view.email] };
async function round(n: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      await pool.send(envelope, raw);
    }
  };
  await Promise.all(Array.from({ length: POOL }, worker));
}

await round(Math.min(1000, MESSAGES)); // warm: connections open, code optimised
const results: Array<{ user: number; system: number }> = [];
let session: Session | undefined;
for (let r = 0; r < ROUNDS; r++) {
  if (values.profile && r === ROUNDS - 1) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const before = process.cpuUsage();
  await round(MESSAGES);
  const used = process.cpuUsage(before);
  results.push({ user: used.user / MESSAGES, system: used.system / MESSAGES });
  console.log(
    `round ${r + 1}: ${((used.user + used.system) / MESSAGES).toFixed(1)} µs CPU per message (user ${(used.user / MESSAGES).toFixed(1)}, system ${(used.system / MESSAGES).toFixed(1)})`,
  );
}
if (session) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(values.profile!, JSON.stringify(profile));
  session.disconnect();
}
pool.close();
stopSink();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `\n${raw.length} byte message${values.dots ? ' (every 7th line starts with ".")' : ''}, ${MESSAGES} messages × ${ROUNDS} rounds, pool ${POOL}, relay ${values.sink}: ` +
    `median ${median(results.map((x) => x.user + x.system)).toFixed(1)} µs CPU per message ` +
    `(user ${median(results.map((x) => x.user)).toFixed(1)}, system ${median(results.map((x) => x.system)).toFixed(1)})`,
);
