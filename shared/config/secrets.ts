import { secretsExtensionSettings } from './settings.ts';

/** Reads a secret of the deployment by id or ARN; `versionStage` defaults to AWSCURRENT. */
export type SecretLoader = (secretId: string, versionStage?: 'AWSCURRENT' | 'AWSPREVIOUS') => Promise<string>;

/**
 * In Lambda secrets come from the AWS Parameters and Secrets extension (a
 * localhost HTTP call, cached by the extension), which keeps the Secrets
 * Manager SDK client out of every bundle. Tools outside Lambda (the admin CLI)
 * install an SDK-based loader instead.
 */
let loader: SecretLoader = async (secretId, versionStage) => {
  const { PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: port, AWS_SESSION_TOKEN } = secretsExtensionSettings();
  const stage = versionStage ? `&versionStage=${versionStage}` : '';
  const res = await fetch(`http://localhost:${port}/secretsmanager/get?secretId=${encodeURIComponent(secretId)}${stage}`, {
    headers: { 'X-Aws-Parameters-Secrets-Token': AWS_SESSION_TOKEN ?? '' },
  });
  if (!res.ok) throw new Error(`Secrets extension answered ${res.status}`);
  const body = (await res.json()) as { SecretString?: string };
  if (!body.SecretString) throw new Error(`Secret ${secretId} is empty`);
  return body.SecretString;
};

/** A secret's current value, or the value of another version stage. */
export const readSecret: SecretLoader = (secretId, versionStage) => loader(secretId, versionStage);

export function setBaseSecretLoader(next: SecretLoader): void {
  loader = next;
}
