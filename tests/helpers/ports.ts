// Local ports for tests.
import { createServer } from 'node:net';

/** A local port with nothing listening on it now (connecting is refused; listening on it works). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}
