// Where a CLI command writes: lines for people and scripts (stdout), one-line errors (stderr).
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  isTTY: boolean;
}

/**
 * `digest run`'s first SIGTERM or SIGINT (either engine): say so and abort `controller`, so the sends in
 * flight finish and nothing new is claimed. Returns the function that removes the handlers.
 */
export function stopSendsOnSignal(io: CliIo, controller: AbortController): () => void {
  const onSignal = () => {
    io.err('stopping: finishing the sends in flight (SIGTERM again to wait no longer)');
    controller.abort();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}
