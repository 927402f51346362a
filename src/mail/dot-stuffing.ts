// SMTP DATA's transparency (RFC 5321 4.5.2) at the speed of memchr.
//
// nodemailer's SMTPConnection (what we used to send with) pipes every message through its DataStream: it
// doubles a dot that starts a line, turns a bare CR or bare LF into CRLF (a lone CR followed by a dot gets
// the dot doubled too: SMTP smuggling) and ends with CRLF.CRLF, with a JavaScript loop over every byte.
// Only bytes next to a CR or LF can need anything inserted, so this version finds them with Buffer.indexOf
// (native) and looks only there. The output is byte for byte nodemailer's, whatever the input and however
// it is split into chunks (tests/unit/dot-stuffing.test.ts compares the two on random inputs, random chunking).
// Measured: BENCHMARKS.md § Why the code is shaped this way, dot-stuffing.ts.
//
// data-phase.ts asks dotStuffMessage (at the end of this file) once for the whole message: dotStuff, which
// hands it back as it is when there is nothing to stuff (19.9 µs for a 67 KB digest, its cost being per line).
const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;
const INSERT_LF = Buffer.from('\n');
const INSERT_LF_DOT = Buffer.from('\n.');
const INSERT_CR = Buffer.from('\r');
const INSERT_DOT = Buffer.from('.');

/**
 * The chunk with dots stuffed and line ends made CRLF, given the byte before it (`last`, false at the
 * start of the message). Returns the chunk itself when nothing is inserted (the common case: a well-formed
 * CRLF message with no line starting with a dot; our quoted-printable encoder never starts one so).
 */
export function dotStuff(chunk: Buffer, last: number | false): Buffer {
  const len = chunk.length;
  if (len === 0) return chunk;
  let pieces: Buffer[] | undefined;
  let total = 0;
  let from = 0;
  const insert = (at: number, bytes: Buffer) => {
    pieces ??= [];
    if (at > from) {
      pieces.push(chunk.subarray(from, at));
      total += at - from;
    }
    pieces.push(bytes);
    total += bytes.length;
    from = at;
  };

  // Position 0 depends on the previous chunk's last byte. A CR or LF there is handled in the loop below
  // too, but only for what comes after it (or, for LF, the CR it needs: checked against `last`).
  const first = chunk[0]!;
  if (last === CR && first !== LF) insert(0, first === DOT ? INSERT_LF_DOT : INSERT_LF);
  else if (first === DOT && (last === LF || last === false)) insert(0, INSERT_DOT);

  // Every other insertion sits at a CR or LF (an LF without CR before it) or right after one.
  let nextCr = chunk.indexOf(CR, 0);
  let nextLf = chunk.indexOf(LF, 0);
  while (nextCr !== -1 || nextLf !== -1) {
    let k: number;
    if (nextLf === -1 || (nextCr !== -1 && nextCr < nextLf)) {
      k = nextCr;
      nextCr = chunk.indexOf(CR, k + 1);
      // A CR not followed by LF: LF inserted after it (and a dot doubled if the next byte is one).
      if (k + 1 < len) {
        const next = chunk[k + 1]!;
        if (next !== LF) insert(k + 1, next === DOT ? INSERT_LF_DOT : INSERT_LF);
      }
    } else {
      k = nextLf;
      nextLf = chunk.indexOf(LF, k + 1);
      const prev = k > 0 ? chunk[k - 1]! : last;
      if (prev !== CR) insert(k, INSERT_CR);
      if (k + 1 < len && chunk[k + 1] === DOT) insert(k + 1, INSERT_DOT);
    }
  }
  if (pieces === undefined) return chunk;
  if (from < len) {
    pieces.push(chunk.subarray(from));
    total += len - from;
  }
  return Buffer.concat(pieces, total);
}

// --- A whole message at once -------------------------------------------------------------------------
//
// data-phase.ts hands a message that is one Buffer to the socket without a stream (for our messages
// nothing to stuff): dotStuff gives back the same Buffer when it changes nothing, finding that out with
// two Buffer#indexOf calls per line. Tried and left out: a hand-assembled WebAssembly SIMD scan (faster,
// but ~120 lines of bytecode nobody here could review), a regular expression, String#indexOf.
// Measured: BENCHMARKS.md § Why the code is shaped this way, dot-stuffing.ts.

/** The whole message with dots stuffed and line ends made CRLF (no terminator): `message` itself when nothing changes. */
export function dotStuffMessage(message: Buffer): Buffer {
  return dotStuff(message, false);
}
