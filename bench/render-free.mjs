// `node --import ./bench/render-free.mjs bin/digest.js run`: the send stage with rendering free. Every
// thread's renderer renders its first digest once and hands that same email (its encoded bytes) to every
// other reader; claim, load, ledger, MIME build and SMTP run as always. A measuring instrument, not a
// mode of the service: what `digest run` costs beside rendering, so what no rendering work can win back.
// In the bench: `npm run bench -- --render-free` (BENCHMARKS.md "Latest results").
// Loaded in every thread (worker threads inherit node's --import).
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

// The hooks wrap this one file: should it move, the run would render as always and pass for a floor.
if (!existsSync(new URL('../dist/render/render.js', import.meta.url))) {
  process.stderr.write('render-free: dist/render/render.js not found (npm run build)\n');
  process.exit(2);
}
register('./render-free-hooks.mjs', import.meta.url);
if (isMainThread) process.stderr.write('render-free: every thread sends its first rendered digest to every reader\n');
