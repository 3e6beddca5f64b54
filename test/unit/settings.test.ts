import { afterEach, describe, expect, it } from 'vitest';
import * as z from '#shared/zod.ts';
import { defineSettings, forgetReadSettings, InvalidSettingsError } from '#shared/config/settings.ts';
import { sessionSecretSettings } from '#shared/auth/settings.ts';

const original = { ...process.env };
afterEach(() => {
  process.env = { ...original };
});

/** A fresh declaration per test: a reader keeps what it read, as a cold start does. */
const queueSettings = () =>
  defineSettings('functions/example/handler.ts', z.object({ EXAMPLE_QUEUE_URL: z.string().check(z.minLength(1)), EXAMPLE_RETRY_SECONDS: z._default(z.coerce.number().check(z.int()), 5) }));

describe('settings readers', () => {
  it('throws at first use, naming the function, the variable and the module', () => {
    // Arrange
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'SupportDesk-prod-GroupwebhooksFn';
    delete process.env.EXAMPLE_QUEUE_URL;
    const settings = queueSettings();

    // Act + Assert
    expect(() => settings()).toThrow(InvalidSettingsError);
    expect(() => settings()).toThrow('Invalid environment for function SupportDesk-prod-GroupwebhooksFn: EXAMPLE_QUEUE_URL is required (functions/example/handler.ts)');
  });

  it('outside Lambda, names the variable and the module', () => {
    delete process.env.AWS_LAMBDA_FUNCTION_NAME;
    process.env.EXAMPLE_QUEUE_URL = '';

    expect(() => queueSettings()()).toThrow('Invalid environment: EXAMPLE_QUEUE_URL is required (functions/example/handler.ts)');
  });

  it('says which variable is invalid without echoing its value', () => {
    process.env.EXAMPLE_QUEUE_URL = 'https://sqs.example/q';
    process.env.EXAMPLE_RETRY_SECONDS = 'soon-ish';

    expect(() => queueSettings()()).toThrow(/EXAMPLE_RETRY_SECONDS is invalid: [^]*\(functions\/example\/handler\.ts\)$/);
    expect(() => queueSettings()()).not.toThrow(/soon-ish/);
  });

  it('reads only its own variables, validates once and keeps the values', () => {
    process.env.EXAMPLE_QUEUE_URL = 'https://sqs.example/q';
    delete process.env.EXAMPLE_RETRY_SECONDS;
    const settings = queueSettings();

    const first = settings();
    process.env.EXAMPLE_QUEUE_URL = 'https://sqs.example/changed';

    expect(first).toEqual({ EXAMPLE_QUEUE_URL: 'https://sqs.example/q', EXAMPLE_RETRY_SECONDS: 5 });
    expect(settings()).toBe(first);
  });

  it('reads the environment again after forgetReadSettings (the test runner, between files)', () => {
    process.env.EXAMPLE_QUEUE_URL = 'https://sqs.example/q';
    const settings = queueSettings();
    expect(settings().EXAMPLE_QUEUE_URL).toBe('https://sqs.example/q');
    process.env.EXAMPLE_QUEUE_URL = 'https://sqs.example/next-file';

    forgetReadSettings();

    expect(settings().EXAMPLE_QUEUE_URL).toBe('https://sqs.example/next-file');
  });

  it('the session secret: SESSION_SECRET_ARN when deployed, SESSION_SECRET locally, and neither names the ARN', () => {
    expect(sessionSecretSettings.problems({ SESSION_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:s' })).toEqual([]);
    expect(sessionSecretSettings.problems({ SESSION_SECRET: 'x'.repeat(32) })).toEqual([]);
    expect(sessionSecretSettings.problems({ TABLE_NAME: 't' })).toEqual(['SESSION_SECRET_ARN is required, or SESSION_SECRET locally']);
  });
});
