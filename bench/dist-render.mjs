// The render path's modules from one build's `dist/` (so two builds can be loaded side by side), and the links
// the benches sign with: one place for message-hash, load-render-loop, render-ab and card-build-cost.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function renderParts(distArg) {
  const dist = pathToFileURL(resolve(distArg)).href;
  const { openDatabase } = await import(`${dist}/db/open.js`);
  const { DigestLoader } = await import(`${dist}/render/view.js`);
  const { createRenderer } = await import(`${dist}/render/render.js`);
  const { createMessageBuilder } = await import(`${dist}/mail/raw-message.js`);
  const { Links } = await import(`${dist}/links.js`);
  const { Tokens } = await import(`${dist}/tokens.js`);
  const benchLinks = (clock) => new Links('https://digest.bench.example', new Tokens('bench-secret-key-0123456789abcdef0123456789'), clock);
  return { dist, openDatabase, DigestLoader, createRenderer, createMessageBuilder, benchLinks };
}
