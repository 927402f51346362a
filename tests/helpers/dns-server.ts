// A tiny authoritative DNS server on a local UDP port for tests: TXT records from a table, NXDOMAIN for
// any other name, no answer for other record types (what `digest doctor` asks: SPF, DKIM, DMARC).
// Point the service at it with DNS_SERVERS=127.0.0.1:<port>.
import { createSocket } from 'node:dgram';

export interface DnsServer {
  /** 127.0.0.1:<port>, for DNS_SERVERS */
  address: string;
  /** Names asked, in order (lower case). */
  asked: string[];
  close(): Promise<void>;
}

const TXT = 16;

function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = offset;
  while (msg[i]! !== 0) {
    const len = msg[i]!;
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'));
    i += len + 1;
  }
  return { name: labels.join('.').toLowerCase(), end: i + 1 };
}

function txtRdata(value: string): Buffer {
  const chunks: Buffer[] = [];
  // One TXT record is strings of at most 255 bytes each (long DKIM keys are split, and joined by readers).
  for (let i = 0; i < value.length || i === 0; i += 255) {
    const part = Buffer.from(value.slice(i, i + 255), 'latin1');
    chunks.push(Buffer.from([part.length]), part);
  }
  return Buffer.concat(chunks);
}

/** `records`: name -> TXT values at that name. */
export async function startDnsServer(records: Record<string, string[]>): Promise<DnsServer> {
  const table = new Map(Object.entries(records).map(([k, v]) => [k.toLowerCase(), v]));
  const asked: string[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    const { name, end } = readName(msg, 12);
    const qtype = msg.readUInt16BE(end);
    asked.push(name);
    const values = table.get(name);
    const answers = values && qtype === TXT ? values : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0);
    header.writeUInt16BE(0x8400 | (msg.readUInt16BE(2) & 0x0100) | (values ? 0 : 3), 2); // QR, AA, RD copied, NXDOMAIN when unknown
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const question = msg.subarray(12, end + 4);
    const records = answers.map((v) => {
      const rdata = txtRdata(v);
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      rr.writeUInt16BE(TXT, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(60, 6);
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    socket.send(Buffer.concat([header, question, ...records]), rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    asked,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
