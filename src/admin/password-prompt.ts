// `digest admin-password`: reads a password and prints its scrypt hash for ADMIN_PASSWORD_HASH. On a
// terminal it reads twice without echo (raw mode: nothing is printed, not even stars); from a pipe it
// takes the first line (`printf '%s\n' "$PW" | digest admin-password`), so it can be scripted.
import type { CliIo } from '../cli-io.ts';
import { AppError } from '../errors.ts';
import { hashPassword } from './password.ts';

function readHidden(prompt: string, stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream): Promise<string> {
  return new Promise((resolve, reject) => {
    stderr.write(prompt);
    let value = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003' || ch === '\u0004') return done(new AppError('CANCELLED', 'cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

async function readFirstLine(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

export async function cmdAdminPassword(io: CliIo, stdin: NodeJS.ReadStream = process.stdin, stderr: NodeJS.WriteStream = process.stderr): Promise<number> {
  let password: string;
  if (stdin.isTTY) {
    password = await readHidden('Console password (at least 12 characters): ', stdin, stderr);
    const again = await readHidden('The same again: ', stdin, stderr);
    if (again !== password) throw new AppError('PASSWORD_MISMATCH', 'the two passwords differ: nothing made');
  } else {
    password = await readFirstLine(stdin);
  }
  if (password.length < 12) throw new AppError('PASSWORD_SHORT', `password: at least 12 characters (got ${password.length})`);
  const hash = await hashPassword(password);
  // Single quotes: the hash has "$" in it, which a shell or some .env readers would expand.
  io.out(`ADMIN_PASSWORD_HASH='${hash}'`);
  return 0;
}
