// The README's "Changing things" section promises that each of its diffs applies to this branch with
// `git apply`. They are documentation, so nothing else would notice when the code moves under them: the
// first one (a card template) had stopped applying after the template's markup changed, and the second's
// tests missed a test file added later. This checks the first promise on every run (`git apply --check`,
// which writes nothing and needs no repository); what each diff's own tests say is checked by hand when it
// is written, as the README says.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');

/** The ```diff blocks of one section of the README, by its heading. */
function diffsOf(heading: string): string[] {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no section "## ${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```diff\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe('README worked examples', () => {
  const diffs = diffsOf('Changing things: three worked examples');

  it('has the three diffs it announces', () => {
    expect(diffs).toHaveLength(3);
  });

  it.each([0, 1, 2])('diff %i applies to this branch', (i) => {
    const diff = diffs[i]!;
    let problem = '';
    try {
      execFileSync('git', ['apply', '--check', '-'], { cwd: root, input: diff, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (e) {
      problem = String((e as { stderr?: Buffer }).stderr ?? e);
    }
    expect(problem).toBe('');
  });
});
