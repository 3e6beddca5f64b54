import { stageConfig, type StageConfig, type StageConfigInput } from '../../infra/config.ts';

/** A complete stage for infra tests; override what a test is about. */
export const testStage = (overrides: Partial<StageConfigInput> = {}): StageConfig =>
  stageConfig({
    stage: 'test',
    account: '123456789012',
    region: 'eu-west-1',
    emailFrom: 'support@test.example',
    inboundDomain: 'inbound.test.example',
    alarms: { email: 'oncall@test.example' },
    ...overrides,
  });
