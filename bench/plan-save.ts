// `npx tsx bench/plan-save.ts <file.sqlite> [subscribers]`: writes bench:plan's database (zipf population,
// friendly topics, 1,000 papers, --learning --votes interest, seed 1) and stops before planning, so two
// builds can plan the very same file (bench/plan-dist.mjs) without rebuilding it for each run.
import { ManualClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/open.ts';
import { buildZipfDatabase } from './plan-population.ts';

const [path, subscribers = '100000'] = process.argv.slice(2);
if (!path) throw new Error('usage: npx tsx bench/plan-save.ts <file.sqlite> [subscribers]');
const db = openDatabase(path);
const clock = new ManualClock('2025-11-25T12:00:00Z');
buildZipfDatabase(db, { subscribers: Number(subscribers), papers: 1000, profile: 'friendly', learning: true, votes: 'interest', seed: 1, clock });
db.pragma('wal_checkpoint(TRUNCATE)');
db.close();
