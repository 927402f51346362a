// What the web layer is given (WebDeps) and what each route module receives (RouteDeps). Kept apart
// from server.ts so route modules do not import the server that imports them.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import type { Links } from '../links.ts';
import type { Logger } from '../log.ts';
import type { Inbox } from '../mail/catcher.ts';
import type { Renderer } from '../render/render.ts';
import type { SubscriberService } from '../subscribers/service.ts';
import type { Pages } from './pages.ts';
import type { PollReport } from '../ingest/sources.ts';
import type { FeedbackService } from '../feedback/service.ts';
import type { FeedService } from '../feed/atom.ts';
import type { TopicPreviewService } from '../topics/preview-service.ts';

export interface WebDeps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  links: Links;
  subscribers: SubscriberService;
  /** The topic builder's live preview (GET /api/topics/preview). */
  topicPreview: TopicPreviewService;
  renderer: Pick<Renderer, 'webView'>;
  /** The local mail catcher's inbox (no SMTP_URL); its pages are served only when set. */
  inbox?: Inbox | undefined;
  /** Default: the templates under templates/pages/. */
  pages?: Pages;
  /** Behind a reverse proxy: take the client address from X-Forwarded-For (rate limits are per address). */
  trustProxy?: boolean;
  /** Topic previews per address per minute (default 120). */
  previewRateLimit?: number;
  /** Called after a subscriber confirms (the scheduler may send their first digest sooner). */
  onConfirmed?: (subscriberId: number) => void;
  /** GET for the SES/SNS webhook (signing certificates, SubscribeURL); default fetch. Tests serve their own. */
  snsFetchText?: (url: string) => Promise<string>;
  /** The console's "fetch now" (default: one poll of the configured sources). */
  fetchSourcesNow?: () => Promise<PollReport[]>;
  /** Issue 13: feedback and follow links from the email; their routes are served only when set. */
  feedback?: FeedbackService | undefined;
  /** Issue 13: personal Atom feeds; served only when set. */
  feeds?: FeedService | undefined;
}

/** Everything route modules receive. */
export interface RouteDeps extends WebDeps {
  pages: Pages;
}
