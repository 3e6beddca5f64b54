import { forgetReadSettings } from '#shared/config/settings.ts';

// Unit tests exercise pure rules: no emulator is started for them. Modules that read their settings at load get
// values naming no running service (port 9, discard), so a unit test that reached the store would fail loudly instead
// of passing on a side effect.
//
// Runs before each unit file. The unit project does not isolate files (vitest.config.ts): a worker runs its files one
// after another in one process, so the environment as the worker started is put back first (a file's changes are its
// own), and the settings are read afresh from it.
const pristine = ((globalThis as { pristineUnitEnv?: NodeJS.ProcessEnv }).pristineUnitEnv ??= { ...process.env });
for (const k of Object.keys(process.env)) if (!(k in pristine)) delete process.env[k];
Object.assign(process.env, pristine, {
  TABLE_NAME: 'unit-tests',
  RATE_LIMIT_TABLE_NAME: 'unit-tests-counters',
  AWS_REGION: 'us-east-1',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
  SESSION_SECRET: 'unit-tests-have-no-session-secret-of-their-own-0123456789',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
});
process.env.WEBHOOK_RETRY_SCALE ??= '0.00001';
forgetReadSettings();
