#!/usr/bin/env node
// Last step of `npm run build`: MJML's output of the email templates saved as dist/templates.json, so the
// compiled service never loads MJML (see src/render/render-templates.ts, TEMPLATE_CACHE_FILE).
const { writeTemplateCache, TEMPLATE_CACHE_FILE } = await import('../dist/render/render-templates.js');
await writeTemplateCache();
process.stdout.write(`templates compiled by MJML into ${TEMPLATE_CACHE_FILE}\n`);
