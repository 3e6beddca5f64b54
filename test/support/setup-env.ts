import { inject } from 'vitest';
import { configureLocalEnv } from '../../local/stack.ts';

// Runs in each test worker before the test file imports any handler module.
configureLocalEnv({ dynamodbEndpoint: inject('dynamodbEndpoint'), sessionSecret: inject('sessionSecret') });
