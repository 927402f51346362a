// The function budget: no function, method or arrow function in src/ over 80 lines, except the named hot
// loops below, each held to its length today. Measured with the TypeScript compiler: from the function's
// first token (its doc comment not included) to its closing brace.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const BUDGET = 80;
const SRC = new URL('../../src/', import.meta.url).pathname;

/**
 * Hot loops kept whole on purpose: file name (any folder, so a move keeps the entry) + function, with its
 * line count today as a ceiling and the measurement that says why, in BENCHMARKS.md.
 */
const ALLOWED: { file: string; fn: string; ceiling: number; why: string }[] = [
  {
    file: 'digest-email.ts',
    fn: 'renderDigestEmail',
    ceiling: 173,
    why: 'once per digest, the render stage (0.92 ms of a digest, the largest share): BENCHMARKS.md § Why the code is shaped this way, hot loops',
  },
  {
    file: 'html-layout.ts',
    fn: 'encodeInto',
    ceiling: 135,
    why: "every character of every HTML part: the reader's values' encoding, 10.2% of a broad load + render + build (same section)",
  },
  {
    file: 'view.ts',
    fn: 'DigestLoader.load',
    ceiling: 125,
    why: "once per digest: the loader's row statement, 7.2% of a broad load + render + build (same section)",
  },
  {
    file: 'raw-message.ts',
    fn: 'createMessageBuilder',
    ceiling: 113,
    why: 'once per message, its closures sharing the per-builder buffers: the MIME build, 3.2-3.5% of a sending thread (same section)',
  },
  {
    file: 'html-fixed-run.ts',
    fn: 'encodeFixedRun',
    ceiling: 83,
    why: "every shared run of a card, per column: laying out fixed runs, 3.9% of a broad load + render + build (same section)",
  },
];

interface Fn {
  file: string;
  name: string;
  lines: number;
}

function* tsFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* tsFiles(p);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield p;
  }
}

type FunctionNode = ts.FunctionLikeDeclaration;

function isFunction(n: ts.Node): n is FunctionNode {
  return (
    ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) ||
    ts.isConstructorDeclaration(n) || ts.isGetAccessorDeclaration(n) || ts.isSetAccessorDeclaration(n)
  );
}

function nameText(n: ts.PropertyName | ts.BindingName | undefined, sf: ts.SourceFile): string | undefined {
  if (!n) return undefined;
  if (ts.isIdentifier(n) || ts.isPrivateIdentifier(n) || ts.isStringLiteral(n) || ts.isNumericLiteral(n)) return n.text;
  return n.getText(sf);
}

/** `name`, `Class.method`, or the variable / property an arrow function is assigned to. */
function functionName(fn: FunctionNode, sf: ts.SourceFile): string {
  const own = ts.isConstructorDeclaration(fn) ? 'constructor' : nameText(fn.name, sf);
  const parent = fn.parent;
  if (ts.isClassLike(parent)) return `${parent.name?.text ?? '<class>'}.${own ?? '<anonymous>'}`;
  if (own) return own;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    const holder = nameText(parent.name, sf) ?? '<anonymous>';
    return ts.isPropertyDeclaration(parent) && ts.isClassLike(parent.parent) ? `${parent.parent.name?.text ?? '<class>'}.${holder}` : holder;
  }
  return '<anonymous>';
}

function measure(): Fn[] {
  const out: Fn[] = [];
  for (const path of tsFiles(SRC)) {
    const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const line = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
    const visit = (n: ts.Node): void => {
      if (isFunction(n) && n.body) {
        out.push({ file: relative(SRC, path), name: functionName(n, sf), lines: line(n.end) - line(n.getStart(sf)) + 1 });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}

const allowance = (f: Fn) => ALLOWED.find((a) => a.file === basename(f.file) && a.fn === f.name);

describe('the function budget', () => {
  const fns = measure();

  it(`has no function over ${BUDGET} lines outside the named hot loops`, () => {
    const over = (n: number) => fns.filter((f) => f.lines > n);
    console.log(
      `functions in src/: ${fns.length}; over 60 lines: ${over(60).length}, over 80: ${over(80).length}, over 100: ${over(100).length}\n` +
        over(60)
          .sort((a, b) => b.lines - a.lines)
          .map((f) => `  ${String(f.lines).padStart(4)}  ${f.file} ${f.name}${allowance(f) ? ' (hot loop)' : ''}`)
          .join('\n'),
    );
    const offenders = over(BUDGET)
      .filter((f) => !allowance(f))
      .map((f) => `${f.file} ${f.name}: ${f.lines} lines`);
    expect(offenders).toEqual([]);
  });

  it('holds each hot loop to its length today, and names only functions that exist', () => {
    const grown = fns.flatMap((f) => {
      const a = allowance(f);
      return a && f.lines > a.ceiling ? [`${f.file} ${f.name}: ${f.lines} lines, ceiling ${a.ceiling}`] : [];
    });
    expect(grown).toEqual([]);
    const within = fns.filter((f) => allowance(f) && f.lines <= BUDGET).map((f) => `${f.file} ${f.name} (${f.lines})`);
    if (within.length > 0) console.log(`hot loops now within the budget, their entries can go: ${within.join(', ')}`);
    const stale = ALLOWED.filter((a) => !fns.some((f) => basename(f.file) === a.file && f.name === a.fn)).map((a) => `${a.file} ${a.fn}`);
    expect(stale).toEqual([]);
  });
});
