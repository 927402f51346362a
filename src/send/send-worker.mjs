// Entry point of a send worker thread (see send-workers.ts). Node 20 runs no TypeScript, so the thread
// starts here, registers tsx (as bin/digest.js does for the main thread), then loads the worker itself.
import { register } from 'tsx/esm/api';

register();
await import('./send-worker.ts');
