// `node --import ./bench/use-dist.mjs bench/start.mjs` (npm run bench): the benchmark's own files run from
// TypeScript (tsx), the service it measures runs as production does, from the compiled dist/ (npm run
// build). Every import that resolves to src/**/*.ts is answered with dist/**/*.js instead: no compiler in
// the service's code paths, the MJML output read from dist/templates.json (MJML itself, ~86 MB of RSS,
// never loaded), and send worker threads started from dist/send/send-worker.js without tsx.
import { register } from 'node:module';

register('./dist-resolve.mjs', import.meta.url);
