// Entry point of the console's import thread started from the TypeScript sources (see import-thread.ts;
// the compiled build starts dist/subscribers/import-worker.js directly): registers tsx, then loads it.
import { register } from 'tsx/esm/api';

register();
await import('./import-worker.ts');
