// Unit tests exercise pure rules: no emulator is started for them, and this file imports nothing heavy. Modules that
// read their settings at load get values naming no running service (port 9, discard), so a unit test that reached
// the store would fail loudly instead of passing on a side effect.
Object.assign(process.env, {
  TABLE_NAME: 'unit-tests',
  RATE_LIMIT_TABLE_NAME: 'unit-tests-counters',
  AWS_REGION: 'us-east-1',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
  SESSION_SECRET: 'unit-tests-have-no-session-secret-of-their-own-0123456789',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
});
process.env.WEBHOOK_RETRY_SCALE ??= '0.00001';
