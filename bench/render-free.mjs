// `node --import ./bench/render-free.mjs bin/digest.js run`: the send stage with rendering free. Every
// thread's renderer renders its first digest once and hands that same email (its encoded bytes) to every
// other reader; claim, load, ledger, MIME build and SMTP run as always. A measuring instrument, not a
// mode of the service: what `digest run` costs beside rendering, so what no rendering work can win back.
// With `npm run bench -- --send-in-child --child-node-options="--import $PWD/bench/render-free.mjs"`.
// Loaded in every thread (worker threads inherit node's --import).
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

register('./render-free-hooks.mjs', import.meta.url);
if (isMainThread) process.stderr.write('render-free: every thread sends its first rendered digest to every reader\n');
