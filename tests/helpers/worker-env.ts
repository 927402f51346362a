// Vitest setup file (runs in each test worker before each test file loads): the developer's DATABASE_URL
// and DATABASE_SCHEMA never reach a test's own loadConfig/runCli or a child it starts (tests/helpers/store-env.ts).
import { stripStoreSettings } from './store-env.ts';

stripStoreSettings();
