import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalSecret {
  current: string;
  previous?: string;
}

/**
 * The AWS Parameters and Secrets Lambda extension, locally: the same
 * `GET /secretsmanager/get?secretId=...&versionStage=...` on localhost,
 * checking the `X-Aws-Parameters-Secrets-Token` header against the session
 * token the function was given, answering Secrets Manager's GetSecretValue
 * shape. Functions whose template attaches the extension layer get its port
 * as PARAMETERS_SECRETS_EXTENSION_HTTP_PORT, as the layer would listen on it.
 */
export async function startSecretsExtension(secrets: (id: string) => LocalSecret | undefined, token: string): Promise<{ port: number; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers['x-aws-parameters-secrets-token'] !== token) return send(401, { message: 'Missing or invalid X-Aws-Parameters-Secrets-Token' });
    if (url.pathname !== '/secretsmanager/get') return send(404, { message: 'Not found' });
    const id = url.searchParams.get('secretId') ?? '';
    const stage = url.searchParams.get('versionStage') ?? 'AWSCURRENT';
    const secret = secrets(id);
    const value = stage === 'AWSCURRENT' ? secret?.current : stage === 'AWSPREVIOUS' ? secret?.previous : undefined;
    if (value === undefined) return send(400, { __type: 'ResourceNotFoundException', message: `Secrets Manager can't find the specified secret value for staging label: ${stage}` });
    send(200, { ARN: id, Name: id.split(':').pop(), SecretString: value, VersionStages: [stage], VersionId: stage === 'AWSCURRENT' ? 'local-current' : 'local-previous' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
