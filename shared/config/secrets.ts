/** Reads a secret of the deployment by id or ARN. */
export type SecretLoader = (secretId: string) => Promise<string>;

/**
 * In Lambda secrets come from the AWS Parameters and Secrets extension (a
 * localhost HTTP call, cached by the extension), which keeps the Secrets
 * Manager SDK client out of every bundle. Tools outside Lambda (the admin CLI)
 * install an SDK-based loader instead.
 */
let loader: SecretLoader = async (secretId) => {
  const port = process.env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? '2773';
  const res = await fetch(`http://localhost:${port}/secretsmanager/get?secretId=${encodeURIComponent(secretId)}`, {
    headers: { 'X-Aws-Parameters-Secrets-Token': process.env.AWS_SESSION_TOKEN ?? '' },
  });
  if (!res.ok) throw new Error(`Secrets extension answered ${res.status}`);
  const body = (await res.json()) as { SecretString?: string };
  if (!body.SecretString) throw new Error(`Secret ${secretId} is empty`);
  return body.SecretString;
};

/** A secret's current value. */
export const readSecret = (secretId: string): Promise<string> => loader(secretId);

export function setBaseSecretLoader(next: SecretLoader): void {
  loader = next;
}
