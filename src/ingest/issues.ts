// Turns zod issues into one line that names the place: `papers[3].title: required`.
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

/** `["papers", 3, "title"]` -> `papers[3].title`; a leading index gives `[3].paper.id`. */
export function issuePath(path: readonly PropertyKey[], prefix = ''): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(top level)' : out;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'number') return `the number ${v}`;
  return `a ${typeof v}`;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  array: 'an array',
  object: 'an object',
  boolean: 'true or false',
};

/** The message of one issue, in plain words. Needs the issue's input (parse with `reportInput: true`). */
export function issueMessage(issue: Issue): string {
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case 'invalid_type':
      if (input === undefined) return 'required';
      return `must be ${EXPECTED[issue.expected] ?? issue.expected}, not ${typeName(input)}`;
    case 'too_small':
      if (issue.origin === 'string') return Number(issue.minimum) <= 1 ? 'must not be empty' : `must be at least ${issue.minimum} characters`;
      if (issue.origin === 'array') return `needs at least ${issue.minimum} item${Number(issue.minimum) === 1 ? '' : 's'}`;
      return `must be at least ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `too long (at most ${issue.maximum} characters)`;
      if (issue.origin === 'array') return `too many items (at most ${issue.maximum})`;
      return `must be at most ${issue.maximum}`;
    case 'invalid_union':
      // A missing field whose schema is a union (a paper's id: string or number) is simply missing;
      // zod's own message for it is "Invalid input".
      if (input === undefined) return 'required';
      return issue.message;
    default:
      return issue.message;
  }
}

/** One line for a failed parse: the first problem, and how many more there are. */
export function formatIssues(issues: readonly Issue[], prefix = ''): string {
  const first = issues[0];
  if (!first) return 'invalid';
  const more = issues.length - 1;
  return `${issuePath(first.path, prefix)}: ${issueMessage(first)}${more > 0 ? ` (and ${more} more problem${more === 1 ? '' : 's'})` : ''}`;
}

/** Where a JSON.parse error happened, as `line L column C`, from V8's "at position N" message. */
export function jsonErrorPlace(text: string, error: unknown): string {
  const msg = error instanceof Error ? error.message : String(error);
  // V8 quotes the input in some messages ("Unexpected token '}', "{…}" is not valid JSON"): drop the quote.
  const reason = msg.replace(/ in JSON at position \d+.*$/s, '').replace(/, ".*" is not valid JSON$/s, '');
  const m = /position (\d+)/.exec(msg);
  const pos = m ? Number(m[1]) : /end of JSON input/.test(msg) ? text.length : undefined;
  if (pos === undefined) return `not valid JSON: ${reason}`;
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `not valid JSON at line ${line} column ${column}: ${reason}`;
}
