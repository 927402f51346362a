// Module hooks of bench/render-free.mjs: dist/render/render.js is served as a wrapper whose createRenderer
// renders once per renderer and then returns that email for every view (never released, so its bytes
// stay valid). Everything else the module exports comes from the real one.
const REAL = '?render-free-real';

export async function load(url, context, next) {
  if (!url.endsWith('/dist/render/render.js')) return next(url, context);
  const real = JSON.stringify(url + REAL);
  const source = `
export * from ${real};
import { createRenderer as createRealRenderer } from ${real};
export async function createRenderer(opts) {
  const renderer = await createRealRenderer(opts);
  let first;
  return {
    ...renderer,
    digest(view) {
      first ??= renderer.digest(view);
      return Object.create(first, { release: { value() {} } });
    },
  };
}
`;
  return { format: 'module', source, shortCircuit: true };
}
