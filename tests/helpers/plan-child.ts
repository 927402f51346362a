// A planner in its own process, for the kill -9 test: plans every subscriber's slot now, in small
// chunks so the plan lasts long enough to be killed in the middle. Usage: plan-child.ts <db> <chunk>
import { systemClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/db/open.ts';
import { planDigests } from '../../src/plan/planner.ts';

const [path, chunk] = process.argv.slice(2);
const db = openDatabase(path!);
process.stdout.write('planning\n');
const r = await planDigests(db, { clock: systemClock, mode: 'now', chunkSize: Number(chunk) });
process.stdout.write(`planned ${r.planned}\n`);
db.close();
