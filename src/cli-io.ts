// Where a CLI command writes: lines for people and scripts (stdout), one-line errors (stderr).
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  isTTY: boolean;
}
