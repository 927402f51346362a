// The local mail catcher's inbox in the browser: only when no SMTP_URL is set, and only for requests
// from this machine that carry the start-up token (inbox-guard.ts). Caught HTML is shown inside a sandboxed iframe (no scripts, no same-origin).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import Handlebars from 'handlebars';
import { z } from 'zod';
import { Inbox } from '../../mail/catcher.ts';
import { inboxGuard, type InboxGuardOptions } from './inbox-guard.ts';

export interface InboxDeps extends InboxGuardOptions {
  inbox: Inbox | undefined;
}

const inboxQuery = z.object({ to: z.string().optional(), token: z.string().optional() });
const inboxList = z.array(
  z.object({ id: z.string(), receivedAt: z.string(), from: z.string(), to: z.string(), subject: z.string() }),
);

const page = Handlebars.compile(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{#if list}}Local inbox{{else}}{{title}} · Local inbox{{/if}} · Paper Digest</title>
<link rel="stylesheet" href="/assets/app.css">
</head><body><main class="container inbox">
<p class="crumbs"><a href="/">Paper Digest</a> · <a href="/inbox">Local inbox</a></p>
<h1>{{title}}</h1>
{{#if list}}
<p class="hint">Every email the service sends lands here while no <code>SMTP_URL</code> is set. Newest first.</p>
{{#if messages.length}}
<table class="mail-list"><thead><tr><th scope="col">Received</th><th scope="col">To</th><th scope="col">Subject</th></tr></thead><tbody>
{{#each messages}}<tr><td><time datetime="{{receivedAt}}">{{receivedAt}}</time></td><td>{{to}}</td><td><a href="/inbox/{{id}}">{{subject}}</a></td></tr>
{{/each}}</tbody></table>
{{else}}<p>No email yet. Subscribe on the <a href="/">home page</a>: the confirmation email will appear here.</p>{{/if}}
{{else}}
<dl class="mail-head"><dt>From</dt><dd>{{m.from}}</dd><dt>To</dt><dd>{{m.to}}</dd><dt>Date</dt><dd>{{m.receivedAt}}</dd>
{{#each listHeaders}}<dt>{{key}}</dt><dd><code>{{value}}</code></dd>{{/each}}</dl>
{{#if m.html}}<iframe class="mail-frame" title="HTML part" sandbox="allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation" src="/inbox/{{m.id}}/html"></iframe>{{/if}}
<details><summary>Plain-text part</summary><pre class="mail-text">{{m.text}}</pre></details>
<p><a href="/inbox/{{m.id}}/raw">Raw message (.eml)</a></p>
{{/if}}
</main></body></html>`);

/** The inbox routes in a scope of their own: its onRequest guard covers exactly them, however the URL is spelled. */
export function registerInboxRoutes(parent: FastifyInstance, deps: InboxDeps): void {
  const { inbox } = deps;
  if (!inbox) return;
  void parent.register(async (app) => {
    app.addHook('onRequest', inboxGuard(deps));
    inboxPages(app, inbox);
  });
}

function inboxPages(app: FastifyInstance, inbox: Inbox): void {
  app.get('/inbox', async (_req, reply) => {
    const messages = await inbox.list();
    return reply.type('text/html; charset=utf-8').send(page({ title: 'Local inbox', list: true, messages }));
  });

  /** JSON for scripts and tests: newest first, optionally only those to one address. */
  app
    .withTypeProvider<ZodTypeProvider>()
    .get('/inbox.json', { schema: { querystring: inboxQuery, response: { 200: inboxList } } }, async (req) => inbox.listTo(req.query.to));

  app.get<{ Params: { id: string } }>('/inbox/:id', async (req, reply) => {
    const m = await inbox.get(req.params.id);
    if (!m) return reply.code(404).type('text/plain').send('No such message in the local inbox.');
    const listHeaders = Inbox.deliveryHeaders(m);
    return reply.type('text/html; charset=utf-8').send(page({ title: m.subject || '(no subject)', list: false, m, listHeaders }));
  });

  app.get<{ Params: { id: string } }>('/inbox/:id/html', async (req, reply) => {
    const m = await inbox.get(req.params.id);
    if (!m?.html) return reply.code(404).type('text/plain').send('No HTML part.');
    return reply
      .header('content-security-policy', "sandbox allow-popups allow-popups-to-escape-sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:")
      .type('text/html; charset=utf-8')
      .send(m.html);
  });

  app.get<{ Params: { id: string } }>('/inbox/:id/raw', async (req, reply) => {
    const m = await inbox.get(req.params.id);
    if (!m) return reply.code(404).type('text/plain').send('No such message.');
    return reply.type('message/rfc822').header('content-disposition', `attachment; filename="${m.id}.eml"`).send(m.raw);
  });
}
