import { defineConfig, type Plugin } from 'vitest/config';

/**
 * The tests run src/ (through vite), where the build's MJML output (dist/templates.json) is not found, so
 * every test process that renders loaded and ran MJML: 1.5-1.7 CPU s a process, in ~90 files. This points
 * src/render/render-templates.ts's cache file at the build's, which the global setup has just made fresh
 * (tests/helpers/build.ts). The cache is keyed by the templates' contents: templates that differ from the
 * build's (a test's own folder, an edit since) still go through MJML. Where the line is not found, MJML
 * runs as before (slower, same results).
 */
const templatesFromBuild: Plugin = {
  name: 'templates-from-build',
  enforce: 'pre',
  transform(code, id) {
    if (!id.endsWith('/src/render/render-templates.ts')) return undefined;
    return code.replace(/new URL\((['"])\.\.\/templates\.json\1, import\.meta\.url\)/, "new URL('../../dist/templates.json', import.meta.url)");
  },
};

export default defineConfig({
  plugins: [templatesFromBuild],
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at once on a 2-core machine (vitest's default leaves one core idle): the suite's own
    // processes wait on I/O and child processes much of the time.
    maxWorkers: 2,
    // Builds dist/ once (tests start the built CLI) and probes PostgreSQL once: its tests run where it
    // answers, else are skipped with one line saying why.
    globalSetup: ['tests/helpers/global-setup.ts'],
    env: { LOG_LEVEL: 'silent' },
  },
});
