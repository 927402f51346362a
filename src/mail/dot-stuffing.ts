// SMTP DATA's transparency (RFC 5321 4.5.2) at the speed of memchr.
//
// nodemailer's SMTPConnection pipes every message through its DataStream: it doubles a dot that starts a
// line, turns a bare CR or bare LF into CRLF (a lone CR followed by a dot gets the dot doubled too: SMTP
// smuggling) and ends with CRLF.CRLF. It does so with a JavaScript loop over every byte, which measured
// 0.87 ms per 88 KB message on this machine: more than rendering the digest (0.8 ms), and 58% of the CPU
// of the benchmark's ceiling run (one pre-built message sent over and over). Only bytes next to a CR or LF
// can need anything inserted, and a message has one of those per ~76 bytes (quoted-printable lines), so
// this version finds them with Buffer.indexOf (native) and looks only there: 0.03 ms for the same
// message. The output is byte for byte nodemailer's, whatever the input and however it is split into
// chunks (tests/unit/dot-stuffing.test.ts compares the two on random inputs, random chunking).
//
// It is installed as the `_transform` of each DataStream nodemailer creates (src/mail/data-phase.ts
// already wraps the one method that creates them); the stream's own state fields (lastByte, inByteCount,
// outByteCount) are kept as nodemailer keeps them, so its flush (the terminator) and its log line work.
// A message that is one Buffer (ours) no longer goes through that stream: data-phase.ts asks
// dotStuffMessage (at the end of this file) once for the whole message, which first asks a WebAssembly
// SIMD scan whether there is anything to stuff at all (4.8 µs for a 67 KB digest where the indexOf walk
// takes 19.9 µs, its cost being per line); only then does dotStuff run.
const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;
const INSERT_LF = Buffer.from('\n');
const INSERT_LF_DOT = Buffer.from('\n.');
const INSERT_CR = Buffer.from('\r');
const INSERT_DOT = Buffer.from('.');

/** What DataStream keeps between chunks: the last byte seen (false before the first). */
export interface DotStuffState {
  lastByte: number | false;
  inByteCount: number;
  outByteCount: number;
}

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

/** DataStream's `_transform`, as a drop-in with the same state and output (install with `this` bound). */
export function dotStuffTransform(
  this: DotStuffState & { push(chunk: Buffer): boolean },
  chunk: Buffer | string,
  _encoding: BufferEncoding,
  done: () => void,
): void {
  if (!chunk || chunk.length === 0) {
    done();
    return;
  }
  const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  this.inByteCount += bytes.length;
  const out = dotStuff(bytes, this.lastByte);
  this.outByteCount += out.length;
  this.push(out);
  this.lastByte = bytes[bytes.length - 1]!;
  done();
}

// --- A whole message at once -------------------------------------------------------------------------
//
// data-phase.ts hands a message that is one Buffer to the socket without a stream, and needs to know
// whether dotStuff would change anything (for our messages: never). dotStuff finds out with two
// Buffer#indexOf calls per line, each a JS -> C++ call (~14 ns): 19.9 µs for a 67 KB digest of 605 lines,
// the largest item left on the send path once the stream was gone. The question is local (is a CR not
// followed by an LF, an LF not after a CR, a dot after an LF?), so a small WebAssembly SIMD function asks
// it 64 bytes at a time, whatever the number of lines: 4.8 µs for the same message, 1.4 of them copying it
// into the module's memory (windows of 64 KB; same process, medians of 9 × 3,000). Tried on the way: the
// same comparisons 16 bytes at a time, or a CR/LF bitmask walked bit by bit, 6.6-7.2 µs; a regular
// expression over a latin1 string, 78 µs; String#indexOf over one, 17.5 µs. Without WebAssembly (node
// --jitless) dotStuff answers, as before. tests/unit/dot-stuffing.test.ts checks the answer against
// dotStuff's on random messages, at every position of every lane, and across window edges.

const WINDOW = 64 * 1024;
/** Where a window's first byte goes in the module's memory; the byte before it is at WINDOW_AT - 1. */
const WINDOW_AT = 16;

/**
 * `scan(len)` looks at every pair of neighbouring bytes (x, y) of mem[15 .. 16+len] — the window, the
 * byte before it (LF at the message's start, so that a dot or an LF there counts, as dotStuff's
 * `last` = false) and the byte after it (at the message's end: LF after a last CR, 0 otherwise, so that a
 * last CR is left to the terminator, as DataStream does) — and returns 1 when one pair has
 *   (x == CR) != (y == LF)     a CR not followed by LF, or an LF not preceded by CR
 *   or x == LF and y == '.'    a dot starting a line
 * else 0: exactly the places where dotStuff inserts bytes. 16 pairs per i8x16 comparison (x from
 * mem[a-1 ..], y from mem[a ..]); four of them per loop turn, then single blocks, then the last partial
 * block masked to its length. In (abridged) text format, with BAD(a) = (v128.or (v128.xor (i8x16.eq x CR)
 * (i8x16.eq y LF)) (v128.and (i8x16.eq x LF) (i8x16.eq y DOT))):
 *   (func (export "scan") (param $len i32) (result i32) (local $i i32) (local $a i32) ...
 *     (local.set $a (i32.const 16))                                 ;; $i counts pairs: len + 1 of them
 *     (block (loop (br_if 1 (i32.gt_u (i32.add $i 63) $len))
 *       (if (v128.any_true (v128.or (v128.or BAD($a) BAD($a+16)) (v128.or BAD($a+32) BAD($a+48)))) (return 1))
 *       $i += 64, $a += 64 (br 0)))
 *     (block (loop (br_if 1 (i32.gt_u (i32.add $i 15) $len))
 *       (if (v128.any_true BAD($a)) (return 1)) $i += 16, $a += 16 (br 0)))
 *     (if (i32.gt_u $i $len) (return 0))
 *     (i32.and (i8x16.bitmask BAD($a)) (i32.sub (i32.shl 1 (i32.sub (i32.add $len 1) $i)) 1)))
 */
function scannerModule(): Uint8Array {
  const uleb = (n: number): number[] => {
    const out: number[] = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n) b |= 0x80;
      out.push(b);
    } while (n);
    return out;
  };
  const sleb = (n: number): number[] => {
    const out: number[] = [];
    for (;;) {
      const b = n & 0x7f;
      n >>= 7;
      if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) return [...out, b];
      out.push(b | 0x80);
    }
  };
  const I32 = 0x7f;
  const V128 = 0x7b;
  const EMPTY = 0x40;
  // Locals: 0 $len (the parameter), 1 $i, 2 $a (i32); 3 x, 4 y, 5 CR, 6 LF, 7 DOT (v128).
  const get = (l: number) => [0x20, l];
  const set = (l: number) => [0x21, l];
  const i32 = (n: number) => [0x41, ...sleb(n)];
  const [add, sub, and, shl, gtU] = [[0x6a], [0x6b], [0x71], [0x74], [0x4b]];
  const [block, loop, if_, end, ret] = [[0x02, EMPTY], [0x03, EMPTY], [0x04, EMPTY], [0x0b], [0x0f]];
  const brIf = (depth: number) => [0x0d, depth];
  const br = (depth: number) => [0x0c, depth];
  const simd = (op: number) => [0xfd, ...uleb(op)];
  const load = (offset: number) => [...simd(0x00), 0x00, ...uleb(offset)]; // v128.load, align 1
  const [splat, eq, vAnd, vOr, vXor, anyTrue, bitmask] = [simd(0x0f), simd(0x23), simd(0x4e), simd(0x50), simd(0x51), simd(0x53), simd(0x64)];
  /** BAD($a + k) left on the stack: 16 pairs (mem[a+k-1+j], mem[a+k+j]). */
  const bad = (k: number) => [
    ...(k === 0 ? [...get(2), ...i32(1), ...sub, ...load(0)] : [...get(2), ...load(k - 1)]), ...set(3),
    ...get(2), ...load(k), ...set(4),
    ...get(3), ...get(5), ...eq, ...get(4), ...get(6), ...eq, ...vXor, // (x == CR) != (y == LF)
    ...get(3), ...get(6), ...eq, ...get(4), ...get(7), ...eq, ...vAnd, ...vOr, // | x == LF & y == '.'
  ];
  const advance = (n: number) => [...get(1), ...i32(n), ...add, ...set(1), ...get(2), ...i32(n), ...add, ...set(2)];
  const code = [
    ...i32(CR), ...splat, ...set(5), ...i32(LF), ...splat, ...set(6), ...i32(DOT), ...splat, ...set(7),
    ...i32(WINDOW_AT), ...set(2),
    ...block, ...loop, ...get(1), ...i32(63), ...add, ...get(0), ...gtU, ...brIf(1),
    ...bad(0), ...bad(16), ...vOr, ...bad(32), ...vOr, ...bad(48), ...vOr, ...anyTrue, ...if_, ...i32(1), ...ret, ...end,
    ...advance(64), ...br(0), ...end, ...end,
    ...block, ...loop, ...get(1), ...i32(15), ...add, ...get(0), ...gtU, ...brIf(1),
    ...bad(0), ...anyTrue, ...if_, ...i32(1), ...ret, ...end,
    ...advance(16), ...br(0), ...end, ...end,
    ...get(1), ...get(0), ...gtU, ...if_, ...i32(0), ...ret, ...end,
    ...bad(0), ...bitmask, ...i32(1), ...get(0), ...i32(1), ...add, ...get(1), ...sub, ...shl, ...i32(1), ...sub, ...and,
    ...end,
  ];
  const func = [2, ...uleb(2), I32, ...uleb(5), V128, ...code];
  const section = (id: number, content: number[]) => [id, ...uleb(content.length), ...content];
  const name = (text: string) => [...uleb(text.length), ...Buffer.from(text, 'latin1')];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 1, I32, 1, I32]), // type 0: (i32) -> i32
    ...section(3, [1, 0]), // function 0 has type 0
    ...section(5, [1, 0x00, 2]), // memory 0: 2 pages (a window, the bytes either side, a block's overreach)
    ...section(7, [2, ...name('memory'), 0x02, 0, ...name('scan'), 0x00, 0]),
    ...section(10, [1, ...uleb(func.length), ...func]),
  ]);
}

interface Scanner {
  scan(len: number): number;
  memory: Uint8Array;
}

/** The part of the WebAssembly global used here (the project's types have no DOM library). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { scan: (len: number) => number; memory: { buffer: ArrayBuffer } } };
}

function loadScanner(): Scanner | undefined {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (!wasm) return undefined; // node --jitless
  try {
    const { scan, memory } = new wasm.Instance(new wasm.Module(scannerModule())).exports;
    return { scan, memory: new Uint8Array(memory.buffer) };
  } catch {
    return undefined; // no SIMD
  }
}

let scanner: Scanner | undefined | null = null;

/** Which scan needsStuffing uses in this process: 'wasm', or 'indexOf' (dotStuff) without WebAssembly SIMD. */
export function stuffingScan(): 'wasm' | 'indexOf' {
  if (scanner === null) scanner = loadScanner();
  return scanner ? 'wasm' : 'indexOf';
}

/**
 * Would dotStuff(message, false) change anything? `window` (tests only) scans in smaller windows, so that
 * the bytes either side of a window's edge are exercised.
 */
export function needsStuffing(message: Buffer, window = WINDOW): boolean {
  if (scanner === null) scanner = loadScanner();
  if (scanner === undefined) return dotStuff(message, false) !== message;
  const { scan, memory } = scanner;
  const len = message.length;
  const size = Math.max(1, Math.min(window, WINDOW));
  let start = 0;
  do {
    const end = Math.min(len, start + size);
    memory[WINDOW_AT - 1] = start === 0 ? LF : message[start - 1]!;
    memory.set(start === 0 && end === len ? message : message.subarray(start, end), WINDOW_AT);
    memory[WINDOW_AT + end - start] = end < len ? message[end]! : len > 0 && message[len - 1] === CR ? LF : 0;
    if (scan(end - start) !== 0) return true;
    start = end;
  } while (start < len);
  return false;
}

/** The whole message with dots stuffed and line ends made CRLF (no terminator): `message` itself when nothing changes. */
export function dotStuffMessage(message: Buffer): Buffer {
  return needsStuffing(message) ? dotStuff(message, false) : message;
}
