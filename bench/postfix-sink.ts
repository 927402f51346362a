// Postfix's smtp-sink as the benchmark's relay (`--sink postfix`, the default where it is installed:
// apt-get install postfix). A C program that accepts and discards mail: the other end of the wire costs
// a fraction of what bench/sink.ts (Node's smtp-server, which un-stuffs every byte in JavaScript) costs on
// the same two cores, so the figures are the service's, as with a real relay on another machine. The
// issue's own measurements used it. It counts nothing we can read back: message bytes come from the
// per-digest sample, and its CPU time and peak memory from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { SinkStats } from './sink.ts';

export const POSTFIX_SMTP_SINK = '/usr/sbin/smtp-sink';

export interface PostfixSink {
  url: string;
  /** CPU seconds and peak RSS of the sink so far (messages: -1 unless counted; bytes: -1, not counted). */
  stats(): SinkStats;
  stop(): void;
}

/**
 * `count`: smtp-sink's -c, a running counter it prints at each message's final "." (`mesg=N`), read back
 * into stats().messages: how many messages the relay accepted (bench/run-postgres.ts checks it).
 */
export async function startPostfixSink(opts: { count?: boolean } = {}): Promise<PostfixSink> {
  if (!existsSync(POSTFIX_SMTP_SINK)) throw new Error(`--sink postfix: ${POSTFIX_SMTP_SINK} is missing (apt-get install postfix)`);
  const port = await freePort();
  // -u: the user to run as, required when started as root. Backlog 1000, as bench/sink.ts's maxClients.
  const args = [...(process.getuid?.() === 0 ? ['-u', 'nobody'] : []), ...(opts.count ? ['-c'] : []), `127.0.0.1:${port}`, '1000'];
  const child = spawn(POSTFIX_SMTP_SINK, args, { stdio: ['ignore', opts.count ? 'pipe' : 'ignore', 'inherit'] });
  let messages = -1;
  let tail = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('latin1')).slice(-200);
    const all = [...tail.matchAll(/mesg=(\d+)/g)];
    if (all.length) messages = Number(all[all.length - 1]![1]);
  });
  await waitListening(child, port);
  return {
    url: `smtp://127.0.0.1:${port}`,
    stats: () => ({ ...procStats(child.pid!), messages }),
    stop: () => child.kill('SIGTERM'),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

async function waitListening(child: ChildProcess, port: number): Promise<void> {
  const { connect } = await import('node:net');
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`smtp-sink exited (${child.exitCode}) before listening`);
    const ok = await new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1', () => (c.end(), resolve(true)));
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`smtp-sink did not listen on port ${port}`);
}

/** CPU seconds (utime + stime, every thread) and peak RSS of a process, from /proc. */
export function procStats(pid: number): SinkStats {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (100 per second)
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { type: 'stats', messages: -1, bytes: -1, maxRssMb: Math.round(Number(hwm?.[1] ?? 0) / 1024), cpuSeconds: ticks / 100 };
}
