#!/usr/bin/env node
// Comment share of the sources: lines that hold only comment text (no code) over all lines, blank ones
// included. Parsed with the TypeScript compiler, so a `//` inside a string, regex or template is code.
// Usage: node scripts/comment-share.mjs [folder=src] [--files N] [--skip REGEX]
//   --files N: list the N files with most comment lines; --skip: leave out the files whose path matches.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const args = process.argv.slice(2);
const filesAt = args.indexOf('--files');
const top = filesAt >= 0 ? Number(args[filesAt + 1]) : 0;
const skipAt = args.indexOf('--skip');
const skip = skipAt >= 0 ? new RegExp(args[skipAt + 1]) : undefined;
const root = args.find((a, i) => !a.startsWith('--') && i !== filesAt + 1 && i !== skipAt + 1) ?? 'src';

function* tsFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* tsFiles(p);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield p;
  }
}

/** Per line: 1 = code, 2 = comment (code wins when a line has both). */
function classify(path) {
  const text = readFileSync(path, 'utf8');
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos) => sf.getLineAndCharacterOfPosition(pos).line;
  const lines = new Uint8Array(sf.getLineStarts().length);
  const mark = (from, to, kind) => {
    for (let l = lineOf(from); l <= lineOf(Math.max(from, to - 1)); l++) lines[l] = Math.max(lines[l], kind);
  };
  const comments = new Map();
  const collect = (ranges) => ranges?.forEach((r) => comments.set(r.pos, r.end));
  const visit = (node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const kids = node.getChildren(sf);
    if (kids.length === 0) {
      collect(ts.getLeadingCommentRanges(text, node.pos));
      collect(ts.getTrailingCommentRanges(text, node.end));
      if (node.kind !== ts.SyntaxKind.EndOfFileToken) mark(node.getStart(sf), node.end, 1);
    }
    kids.forEach(visit);
  };
  visit(sf);
  for (const [pos, end] of comments) mark(pos, end, 2);
  // A trailing newline leaves an empty last "line" that no editor shows.
  const all = text.endsWith('\n') ? lines.length - 1 : lines.length;
  let comment = 0;
  for (let l = 0; l < all; l++) if (lines[l] === 2) comment++;
  return { all, comment };
}

let all = 0;
let comment = 0;
const rows = [];
for (const f of tsFiles(root)) {
  if (skip?.test(f)) continue;
  const r = classify(f);
  all += r.all;
  comment += r.comment;
  rows.push({ file: relative('.', f), ...r });
}
console.log(`${root}: ${rows.length} files, ${all} lines, ${comment} comment lines: ${((100 * comment) / all).toFixed(1)}%`);
if (top > 0) {
  rows.sort((a, b) => b.comment - a.comment);
  for (const r of rows.slice(0, top)) console.log(`${String(r.comment).padStart(5)} of ${String(r.all).padStart(4)}  ${r.file}`);
}
