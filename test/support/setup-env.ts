import { inject } from 'vitest';
import { configureLocalEnv } from '../../local/stack.ts';

// Runs in each test worker before the test file imports any handler module.
configureLocalEnv({ dynamodbEndpoint: inject('dynamodbEndpoint'), sessionSecret: inject('sessionSecret'), sqsEndpoint: inject('sqsEndpoint') });
// Webhook retries run on the real schedule scaled down (27.6 h -> about 1 s), so the whole schedule runs in a test.
process.env.WEBHOOK_RETRY_SCALE ??= '0.00001';
