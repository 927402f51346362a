// The two-build alternation of bench/render-ab.mjs and bench/loader-ab.mjs: one child process per load
// order (A first, then B first), blocks of rows alternating the builds inside each, and B/A as the geometric
// mean of the two orders (the build whose modules load first came out 3-8% cheaper: the position cancels).
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';

/** Runs `script --child first second ...rest` for both orders and prints each order's rounds and B/A. */
export function runOrders(script, a, b, rest) {
  const ratios = [];
  for (const [first, second] of [[a, b], [b, a]]) {
    const r = spawnSync(process.execPath, [script, '--child', first, second, ...rest], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) process.exit(r.status ?? 1);
    const lines = r.stdout.trim().split('\n');
    const result = JSON.parse(lines.pop());
    console.log(`${first === a ? 'A' : 'B'} loaded first:\n${lines.map((l) => `  ${l}`).join('\n')}`);
    // CPU per digest of B over A's, whichever came first.
    ratios.push(first === a ? result.second / result.first : result.first / result.second);
  }
  const ratio = Math.sqrt(ratios[0] * ratios[1]);
  console.log(`B/A: ${ratios.map((r) => r.toFixed(3)).join(' (A first), ')} (B first); geometric mean ${ratio.toFixed(3)} (${((ratio - 1) * 100).toFixed(1)}%)`);
}

/**
 * In a child: `rounds` passes over `ids`, `block` rows at a time, the two builds alternating (which goes
 * first in a block alternates too); each build's CPU per row in µs. Prints each round, then the JSON result
 * runOrders reads. `unit`: 'ms' or 'µs' for the round lines.
 */
export function alternate(builds, ids, rounds, block, unit) {
  const load0 = loadavg()[0];
  const scale = unit === 'ms' ? 1000 : 1;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < ids.length; i += block) {
      const slice = ids.slice(i, i + block);
      const order = (i / block + r) % 2 === 0 ? builds : [builds[1], builds[0]];
      for (const x of order) {
        const c = process.cpuUsage();
        for (const id of slice) x.one(id);
        const u = process.cpuUsage(c);
        x.cpu += u.user + u.system;
        x.n += slice.length;
      }
    }
    const [p, q] = builds.map((x) => x.cpu / x.n / scale);
    const digits = unit === 'ms' ? 3 : 2;
    console.log(`round ${r + 1}: first ${p.toFixed(digits)} ${unit}, second ${q.toFixed(digits)} ${unit} per digest (load average ${loadavg()[0].toFixed(1)}, ${load0.toFixed(1)} at start)`);
  }
  const [p, q] = builds.map((x) => x.cpu / x.n);
  console.log(JSON.stringify({ first: p, second: q }));
}
