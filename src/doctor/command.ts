// `digest doctor` as the CLI runs it: one line per check, a last line with the count, exit 1 when any failed.
import type { CliIo } from '../cli-io.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { plural } from '../words.ts';
import { checkLine } from './check.ts';
import { dnsResolver } from './dns-checks.ts';
import { runDoctor } from './doctor.ts';

export async function cmdDoctor(config: Config, io: CliIo, logger: Logger, o: { timeoutMs: number }): Promise<number> {
  const checks = await runDoctor({ config, logger, now: new Date(), timeoutMs: o.timeoutMs, resolver: dnsResolver(config.DNS_SERVERS, o.timeoutMs) });
  for (const c of checks) io.out(checkLine(c));
  const failed = checks.filter((c) => c.status === 'fail').length;
  const warned = checks.filter((c) => c.status === 'warn').length;
  const warnings = warned > 0 ? ` (${plural(warned, 'warning', 'warnings')})` : '';
  if (failed > 0) {
    io.err(`doctor: ${failed} of ${plural(checks.length, 'check', 'checks')} failed${warnings}`);
    return 1;
  }
  io.out(`doctor: all ${checks.length} checks passed${warnings}`);
  return 0;
}
