// A discarding SMTP sink for the benchmark: accepts every message, parses nothing, counts messages and bytes.
// Runs in its own process so its CPU and memory are not the benchmark's.
//   forked by bench/run.ts: reports { type: 'listening', port } over IPC, answers 'stats', exits on 'stop'
//   by hand:                tsx bench/sink.ts [--port 2525]   (prints a line of counts every 5 s)
import { parseArgs } from 'node:util';
import { SMTPServer } from 'smtp-server';

export interface SinkStats {
  type: 'stats';
  messages: number;
  bytes: number;
  /** Peak resident memory of the sink process, in MB. */
  maxRssMb: number;
  /** CPU seconds the sink used (user + system). */
  cpuSeconds: number;
}

export type SinkMessage = { type: 'listening'; port: number } | SinkStats;

let messages = 0;
let bytes = 0;

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  disableReverseLookup: true,
  logger: false,
  maxClients: 1000,
  size: 0,
  onData(stream, _session, callback) {
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    stream.on('end', () => {
      messages++;
      callback();
    });
  },
});

function stats(): SinkStats {
  const u = process.resourceUsage();
  return {
    type: 'stats',
    messages,
    bytes,
    maxRssMb: Math.round(u.maxRSS / 1024),
    cpuSeconds: Math.round((u.userCPUTime + u.systemCPUTime) / 1e4) / 100,
  };
}

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });
server.on('error', (e) => {
  console.error(`sink: ${e.message}`);
});
server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : Number(values.port);
  if (process.send) {
    process.send({ type: 'listening', port } satisfies SinkMessage);
    process.on('message', (m: unknown) => {
      if (m === 'stats') process.send!(stats());
      if (m === 'stop') server.close(() => process.exit(0));
    });
    process.on('disconnect', () => process.exit(0));
  } else {
    console.log(`sink listening on smtp://127.0.0.1:${port}`);
    setInterval(() => console.log(JSON.stringify(stats())), 5000).unref();
  }
});
