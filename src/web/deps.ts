// What the web layer is given (WebDeps) and what each route module receives (RouteDeps). Kept apart
// from server.ts so route modules do not import the server that imports them.
import type { Clock } from '../clock.ts';
import type { SharedLimits } from '../db/shared-limits.ts';
import type { Config } from '../config.ts';
import type { TrustProxy } from '../trust-proxy.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import type { Inbox } from '../mail/catcher.ts';
import type { Renderer } from '../render/render.ts';
import type { SubscriberDoor } from '../subscribers/door.ts';
import type { Pages } from './pages.ts';
import type { PollReport } from '../ingest/sources.ts';
import type { ReaderFeedback } from '../feedback/port.ts';
import type { ReaderFeeds } from '../feed/port.ts';
import type { DigestViews } from '../subscribers/open-digest.ts';
import type { TopicPreviewService } from '../match/preview-service.ts';
import type { ConsoleService } from '../admin/console.ts';
import type { OperatorRoster } from '../operator/roster.ts';
import type { WebhookEvents } from '../bounces/webhook-events.ts';
import type { HealthCheck } from '../report/health.ts';
import type { PostBatchResult, PostedBatch } from '../ingest/post-batch.ts';

export interface WebDeps {
  clock: Clock;
  config: Config;
  logger: Logger;
  links: Links;
  /** The subscriber door the public routes call (subscribe, confirm, unsubscribe, manage): SQLite's or PostgreSQL's (subscribers/door.ts). */
  door: SubscriberDoor;
  /** The operator console's pages and actions (served only with ADMIN_PASSWORD_HASH). */
  console: ConsoleService;
  /** The console's subscriber pages and consent actions: SQLite's, or PostgreSQL's with DATABASE_URL (operator/roster.ts). */
  roster: OperatorRoster;
  /** POST /api/batches, GET /health, GET /metrics. */
  machine: MachineApi;
  /** Where the rate limits count (login, subscribe, preview): the store every instance shares. */
  limits: SharedLimits;
  /** The topic builder's live preview (GET /api/topics/preview). */
  topicPreview: TopicPreviewService;
  renderer: Pick<Renderer, 'webView'>;
  /** The local mail catcher's inbox (no SMTP_URL); its pages are served only when set. */
  inbox?: Inbox | undefined;
  /** The local inbox's access token (`digest serve` prints the link carrying it); default: a random one. */
  inboxToken?: string;
  /** Default: the templates under templates/pages/. */
  pages?: Pages;
  /** Behind a reverse proxy: which proxies may name the client in X-Forwarded-For (default TRUST_PROXY). */
  trustProxy?: TrustProxy;
  /** Topic previews per address per minute (default 120). */
  previewRateLimit?: number;
  /** Called after a subscriber confirms (the scheduler may send their first digest sooner). */
  onConfirmed?: (subscriberId: number) => void;
  /** The relays' bounce and complaint webhooks (POST /webhooks/mailgun, /webhooks/ses). */
  webhooks: WebhookEvents;
  /** GET /digests/:token: the digest a "view in browser" link names (subscribers/open-digest.ts). */
  digests: DigestViews;
  /** The console's "fetch now" (default: one poll of the configured sources). */
  fetchSourcesNow?: () => Promise<PollReport[]>;
  /** The email's feedback ("more/less like this") and follow links; their routes are served only when set. */
  feedback?: ReaderFeedback | undefined;
  /** Each subscriber's personal Atom feed; served only when set. */
  feeds?: ReaderFeeds | undefined;
}

/** The machine routes' services (wired in src/main.ts). */
export interface MachineApi {
  /** GET /health: undefined when the database takes a write, else the storage fault (report/health.ts). */
  health: HealthCheck;
  /** GET /metrics: Prometheus text (report/status.ts), from the store the deployment lives in. */
  metrics(): Promise<string>;
  /** POST /api/batches: read and store one posted batch (ingest/post-batch.ts; into PostgreSQL with DATABASE_URL). */
  postBatch(posted: PostedBatch): PostBatchResult | Promise<PostBatchResult>;
}

/** Everything route modules receive. */
export interface RouteDeps extends WebDeps {
  pages: Pages;
}
