// What an import says about single lines of its file: the bad rows that stop it (validation) and any
// per-line note a check adds while writing. One shape for every check, so a new rule only calls add():
// the CLI names the first and counts the rest, the console lists the first MAX_LINES_LISTED in line order.
import { AppError } from '../errors.ts';

/** One line of the file and what is wrong with it (or what was done with it). */
export interface LineIssue {
  line: number;
  message: string;
}

/** Lines a report keeps (the lowest line numbers); past it, they are only counted. */
export const MAX_LINES_LISTED = 100;

export class LineReport {
  private kept: LineIssue[] = [];
  private sorted = true;
  /** Every line added, listed or not. */
  count = 0;

  add(line: number, message: string): void {
    this.count++;
    const last = this.kept[this.kept.length - 1];
    if (this.kept.length >= MAX_LINES_LISTED && last && this.sorted && line >= last.line) return;
    if (last && line < last.line) this.sorted = false;
    this.kept.push({ line, message });
    // Lines mostly come in file order (a duplicate address is found a little later): trim now and then.
    if (this.kept.length >= 2 * MAX_LINES_LISTED) this.trim();
  }

  /** The first MAX_LINES_LISTED lines, by line number. */
  get lines(): LineIssue[] {
    this.trim();
    return this.kept.slice();
  }

  get first(): LineIssue | undefined {
    return this.lines[0];
  }

  private trim(): void {
    if (!this.sorted) this.kept.sort((a, b) => a.line - b.line);
    this.sorted = true;
    if (this.kept.length > MAX_LINES_LISTED) this.kept.length = MAX_LINES_LISTED;
  }
}

/** An import refused because of bad lines: nothing was written; `lines` lists them (the first 100). */
export class ImportRefused extends AppError {
  readonly lines: LineIssue[];
  readonly badLines: number;

  /** `message`: the one already made (an import thread's error, carried over). */
  constructor(file: string, report: LineReport, message?: string) {
    const [first, ...rest] = report.lines;
    const others = report.count - 1;
    const shown = rest.slice(0, 10).map((l) => l.line);
    const more =
      others > 0
        ? ` (and ${others} more bad row${others > 1 ? 's' : ''}: line${others > 1 ? 's' : ''} ${shown.join(', ')}${others > shown.length ? ', …' : ''})`
        : '';
    super('IMPORT_INVALID', message ?? `${file} line ${first!.line}: ${first!.message}${more}; nothing was imported`);
    this.name = 'ImportRefused';
    this.lines = report.lines;
    this.badLines = report.count;
  }
}
