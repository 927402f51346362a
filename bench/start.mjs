// Entry of `npm run bench`: `node --import ./bench/use-dist.mjs bench/start.mjs [options]`. The benchmark's
// own files are TypeScript, so tsx is registered here, in this thread only: send worker threads inherit
// the process's --import flags, not this registration, and so run the compiled service without a
// compiler (bench/use-dist.mjs maps the service's modules to dist/ in every thread).
import { register } from 'tsx/esm/api';

register();
await import('./run.ts');
