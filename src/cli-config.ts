// `digest config`: every setting's effective value, secrets masked, and where it came from (default,
// .env, environment), then the variables that look meant for us but are not settings. Exit 1 when the
// configuration would not load, with the same one line every command prints then.
import type { CliIo } from './cli-io.ts';
import { effectiveSettings, type EnvSources } from './config-check.ts';
import { loadConfig, SETTING_NAMES, settingDefault } from './config.ts';
import { errorMessage } from './errors.ts';

export function cmdConfig(io: CliIo, sources: EnvSources): number {
  const defaultOf = (name: string): string | undefined => {
    const d = settingDefault(name);
    if (d !== undefined || name !== 'PUBLIC_URL') return d;
    return `http://localhost:${sources.env.PORT || settingDefault('PORT')}`;
  };
  const rows = effectiveSettings(sources, SETTING_NAMES, defaultOf);
  const width = Math.max(...rows.map((r) => r.name.length));
  const valueWidth = Math.min(48, Math.max(...rows.map((r) => (r.value ?? '-').length)));
  for (const r of rows) io.out(`${r.name.padEnd(width)}  ${(r.value ?? '-').padEnd(valueWidth)}  ${r.origin}`);
  try {
    loadConfig(sources.env);
    return 0;
  } catch (e) {
    io.err(`error: ${errorMessage(e).split('\n')[0]}`);
    return 1;
  }
}
