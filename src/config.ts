// Environment -> typed configuration, validated with zod at start-up.
// Every variable here is listed in .env.example; a bad value stops start-up with a message naming it.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { AppError } from './errors.ts';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));
const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), { error: 'must be an http(s) URL' })
  .transform((u) => u.replace(/\/+$/, ''));

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const envSchema = z.object({
  PORT: int(0, 65535).default(3000),
  HOST: z.string().min(1).default('localhost'),
  PUBLIC_URL: httpUrl.optional(),
  DATABASE_PATH: z.string().min(1).default('db/digest.sqlite'),
  SMTP_URL: optionalText.refine((v) => v === undefined || /^smtps?:\/\//i.test(v), {
    error: 'must look like smtp://user:pass@host:port or smtps://…',
  }),
  MAIL_FROM: z.string().min(3).default('Paper Digest <digest@localhost>'),
  UNSUBSCRIBE_MAILTO: optionalText.refine((v) => v === undefined || z.email().safeParse(v).success, {
    error: 'must be an email address',
  }),
  MAIL_CATCHER_PORT: int(0, 65535).default(1025),
  DIGEST_CRON: z.string().min(9).default('0 * * * *'),
  DIGEST_TZ: z
    .string()
    .default('UTC')
    .refine(isValidTimeZone, { error: 'must be an IANA time zone such as Europe/Paris' }),
  DIGEST_HOUR: int(0, 23).default(7),
  DIGEST_RETENTION_DAYS: int(1, 36_500).default(90),
  SECRET_KEY: optionalText.refine((v) => v === undefined || v.length >= 32, {
    error: 'must be at least 32 characters (openssl rand -hex 32)',
  }),
  API_TOKEN: optionalText.refine((v) => v === undefined || v.length >= 16, {
    error: 'must be at least 16 characters',
  }),
  SOURCES: z.string().default(''),
  HF_API_URL: httpUrl.default('https://huggingface.co/api/daily_papers'),
  ARXIV_RSS_URL: httpUrl.default('https://rss.arxiv.org/rss'),
  ARXIV_API_URL: httpUrl.default('https://export.arxiv.org/api/query'),
  ARXIV_INCLUDE_CROSSLISTS: bool.default(false),
  SOURCE_LOOKBACK_DAYS: int(0, 60).default(3),
  FETCH_TIMEOUT_MS: int(100, 300_000).default(20_000),
  FETCH_RETRIES: int(0, 10).default(3),
  ARXIV_MIN_INTERVAL_MS: int(0, 60_000).default(3_000),
  // Issue 13: a like: topic whose example paper is not in the database looks it up at ARXIV_API_URL.
  LIKE_LOOKUP: bool.default(true),
  SMTP_POOL_SIZE: int(1, 100).default(5),
  SMTP_RATE_PER_SECOND: z.coerce.number().min(0).default(0),
  SMTP_MAX_ATTEMPTS: int(1, 50).default(5),
  SMTP_RETRY_BASE_MS: int(1, 86_400_000).default(30_000),
  SMTP_RETRY_MAX_MS: int(1, 86_400_000).default(3_600_000),
  SMTP_TIMEOUT_MS: int(100, 600_000).default(30_000),
  SMTP_RETRY_WINDOW_MS: int(0, 86_400_000).default(600_000),
  RELAY_DOWN_AFTER: int(1, 1000).default(5),
  HARD_FAILURES_TO_SUPPRESS: int(1, 100).default(3),
  SHUTDOWN_GRACE_MS: int(0, 600_000).default(30_000),
  // Threads that build and send digests in a big run (this one included); 1 = no worker threads.
  SEND_WORKERS: int(1, 64).default(Math.min(2, availableParallelism())),
  SUBSCRIBE_RATE_LIMIT: int(1, 100_000).default(10),
  TRUST_PROXY: bool.default(false),
  DKIM_DOMAIN: optionalText,
  DKIM_SELECTOR: optionalText,
  DKIM_PRIVATE_KEY: optionalText,
  DKIM_PRIVATE_KEY_PATH: optionalText,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.infer<typeof envSchema>;

export interface DkimConfig {
  domainName: string;
  keySelector: string;
  privateKey: string;
}

export interface Config extends Omit<Env, 'PUBLIC_URL' | 'DKIM_PRIVATE_KEY' | 'DKIM_PRIVATE_KEY_PATH'> {
  PUBLIC_URL: string;
  /** Set when DKIM_DOMAIN, DKIM_SELECTOR and a key are all given. */
  dkim: DkimConfig | undefined;
}

/** Parses an environment (process.env by default). Throws AppError CONFIG_INVALID naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings in .env mean "unset" for variables with defaults.
  const cleaned: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') cleaned[k] = v;
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new AppError('CONFIG_INVALID', `Invalid configuration: ${lines.join('; ')}`);
  }
  const e = parsed.data;
  const { PUBLIC_URL, DKIM_PRIVATE_KEY, DKIM_PRIVATE_KEY_PATH, ...rest } = e;
  return {
    ...rest,
    PUBLIC_URL: PUBLIC_URL ?? `http://localhost:${e.PORT}`,
    dkim: dkimFrom(e.DKIM_DOMAIN, e.DKIM_SELECTOR, DKIM_PRIVATE_KEY, DKIM_PRIVATE_KEY_PATH),
  };
}

function dkimFrom(
  domain: string | undefined,
  selector: string | undefined,
  key: string | undefined,
  keyPath: string | undefined,
): DkimConfig | undefined {
  if (!domain && !selector && !key && !keyPath) return undefined;
  if (!domain || !selector || (!key && !keyPath)) {
    throw new AppError(
      'CONFIG_INVALID',
      'Invalid configuration: DKIM needs DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY or DKIM_PRIVATE_KEY_PATH together',
    );
  }
  let privateKey = key?.replace(/\\n/g, '\n');
  if (!privateKey) {
    try {
      privateKey = readFileSync(keyPath!, 'utf8');
    } catch (cause) {
      throw new AppError('CONFIG_INVALID', `Invalid configuration: DKIM_PRIVATE_KEY_PATH: cannot read ${keyPath}`, { cause });
    }
  }
  if (!privateKey.includes('PRIVATE KEY')) {
    throw new AppError('CONFIG_INVALID', 'Invalid configuration: DKIM private key is not a PEM private key');
  }
  return { domainName: domain, keySelector: selector, privateKey };
}
