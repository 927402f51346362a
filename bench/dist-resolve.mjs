// Module resolve hook registered by bench/use-dist.mjs: src/**/*.ts -> dist/**/*.js (see there).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SRC = new URL('../src/', import.meta.url).href;
const DIST = new URL('../dist/', import.meta.url).href;

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (!resolved.url.startsWith(SRC) || !resolved.url.endsWith('.ts')) return resolved;
  const url = `${DIST}${resolved.url.slice(SRC.length, -'.ts'.length)}.js`;
  if (!existsSync(fileURLToPath(url))) throw new Error(`bench: ${url} is missing; run \`npm run build\` first`);
  return { url, format: 'module', shortCircuit: true };
}
