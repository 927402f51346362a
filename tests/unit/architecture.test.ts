// Folders follow the flow: the layer order is declared once (scripts/layers.ts, one line of reason per
// layer); this test fails when an import runs back up it or folders import each other in a loop, and
// prints the imports that do. `npx tsx scripts/layers.ts` prints the same figures.
import { describe, expect, it } from 'vitest';
import { backArrows, fileImports, LAYERS, undeclaredUnits, unitLoops, unitOf, type Arrow } from '../../scripts/layers.ts';

/** Unit pairs allowed to run back up, each with why and until when. */
const ALLOWED_BACK: Record<string, string> = {};

/** Loops allowed to stay (a loop found must be one of these or part of one). */
const ALLOWED_LOOPS: { units: string[]; why: string }[] = [];

const arrows = fileImports('src');
const pair = (a: Arrow) => `${unitOf(a.from)} -> ${unitOf(a.to)}`;
const list = (as: readonly Arrow[]) => as.map((a) => `  ${a.from} -> ${a.to}`).join('\n');

describe('the layers of src/', () => {
  it('give every folder and top-level file a place', () => {
    const missing = undeclaredUnits(arrows);
    expect(missing, `give these a layer in scripts/layers.ts: ${missing.join(', ')}`).toEqual([]);
  });

  it('have no import running back up them, but the allowed ones', () => {
    const back = backArrows(arrows).filter((a) => ALLOWED_BACK[pair(a)] === undefined);
    expect(back, `imports running back up the layers (scripts/layers.ts):\n${list(back)}`).toEqual([]);
  });

  it('have no folders importing each other in a loop, but the allowed ones', () => {
    const allowed = (loop: string[]) => ALLOWED_LOOPS.some((l) => loop.every((u) => l.units.includes(u)));
    const loops = unitLoops(arrows).filter((loop) => !allowed(loop));
    const inLoops = new Set(loops.flat());
    const within = arrows.filter((a) => inLoops.has(unitOf(a.from)) && inLoops.has(unitOf(a.to)) && unitOf(a.from) !== unitOf(a.to));
    expect(loops, `folders in import loops, through:\n${list(within)}`).toEqual([]);
  });

  // A warning, not a failure: merging the branch that moves those files must not turn the suite red.
  it('says which allowances are no longer needed', () => {
    const back = new Set(backArrows(arrows).map(pair));
    const loops = unitLoops(arrows);
    const staleBack = Object.keys(ALLOWED_BACK).filter((p) => !back.has(p));
    const staleLoops = ALLOWED_LOOPS.filter((l) => !loops.some((loop) => loop.some((u) => l.units.includes(u)))).map((l) => l.units.join(', '));
    const stale = [...staleBack, ...staleLoops];
    if (stale.length > 0) console.warn(`tests/unit/architecture.test.ts: allowances no longer needed, remove them: ${stale.join('; ')}`);
  });
});

describe('the layer check itself', () => {
  const at = (from: string, to: string): Arrow => ({ from, to });

  it('places a nested folder with its first folder unless the nested one is declared', () => {
    expect(unitOf('web/console/routes.ts')).toBe('web');
    expect(unitOf('render/encode/qp-body.ts')).toBe('render');
    expect(unitOf('subscribers/records/repo.ts')).toBe('subscribers/records');
    expect(unitOf('subscribers/service.ts')).toBe('subscribers');
    expect(unitOf('main.ts')).toBe('main.ts');
  });

  it('declares the ledger between plan and render', () => {
    const layer = (unit: string) => LAYERS.findIndex((l) => l.units.includes(unit));
    expect(layer('ledger')).toBeGreaterThanOrEqual(layer('plan'));
    expect(layer('ledger')).toBeLessThan(layer('render'));
  });

  it('finds an arrow back up and a loop', () => {
    const fake = [at('plan/planner.ts', 'render/view.ts'), at('render/view.ts', 'plan/items.ts'), at('send/sender.ts', 'render/render.ts')];
    expect(backArrows(fake)).toEqual([fake[0]]);
    expect(unitLoops(fake)).toEqual([['plan', 'render']]);
  });
});
