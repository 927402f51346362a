// The planner in its own process, for bench/web-under-plan.ts: plans every subscriber's slot of the
// given instant (mode 'now') as `digest run` does, and prints one JSON line with the planned rows, the
// time taken and the longest event-loop block (= the longest chunk transaction holding the write lock).
// Usage: tsx bench/plan-child.ts <database> <iso instant>
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ManualClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/open.ts';
import { planDigests } from '../src/plan/planner.ts';

const [path, at] = process.argv.slice(2);
const db = openDatabase(path!, { migrate: false });
const loop = monitorEventLoopDelay({ resolution: 5 });
process.stdout.write('planning\n');
loop.enable();
const started = performance.now();
const r = await planDigests(db, { clock: new ManualClock(at!), mode: 'now', busyWaitMs: 5_000 });
const ms = performance.now() - started;
loop.disable();
db.close();
process.stdout.write(`${JSON.stringify({ type: 'planned', ...r, ms, longestBlockMs: loop.max / 1e6 })}\n`);
