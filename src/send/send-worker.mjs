// Entry point of a send worker thread started from the TypeScript sources (see send-workers.ts; the compiled
// build starts dist/send/send-worker.js directly). Node 20 runs no TypeScript, so the thread
// starts here, registers tsx (as bin/digest-dev.js does for the main thread), then loads the worker itself.
import { register } from 'tsx/esm/api';

register();
await import('./send-worker.ts');
