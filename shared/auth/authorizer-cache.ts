import { METRICS } from '../metrics.ts';
import { logger } from '../logger.ts';
import { recordMetric } from '../observability.ts';
import { authorizerCacheSettings } from './settings.ts';

/** Attempts of one flush (each with the SDK's own retries inside), and the first pause between them. */
const ATTEMPTS = 4;
const FIRST_BACKOFF_MS = 100;

type ApiGateway = typeof import('@aws-sdk/client-api-gateway');
type CacheSettings = ReturnType<typeof authorizerCacheSettings>;
/**
 * The API Gateway client (~60 KB minified with its REST protocol) loads on the
 * first flush, from its own chunk (infra/bundling.ts): only credential changes
 * flush, so the users function's other calls never load it. Kept with the
 * settings it was made under: a function reads them once, but the test runner
 * reads them afresh for each file (forgetReadSettings), and a file's control
 * plane (AWS_ENDPOINT_URL_API_GATEWAY, read by the SDK) is its own.
 */
let client: { settings: CacheSettings; ready: Promise<{ sdk: ApiGateway; client: InstanceType<ApiGateway['APIGatewayClient']> }> } | undefined;
let running: Promise<void> | undefined;
let queued: Promise<void> | undefined;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function flushWithRetries(settings: CacheSettings, restApiId: string, stageName: string): Promise<void> {
  // Created on first use: the local stack and the CLI point AWS_ENDPOINT_URL_API_GATEWAY at the local gateway before.
  if (client?.settings !== settings) client = { settings, ready: import('@aws-sdk/client-api-gateway').then((sdk) => ({ sdk, client: new sdk.APIGatewayClient({}) })) };
  const { ready } = client;
  for (let attempt = 1; ; attempt++) {
    try {
      const { sdk, client: apiGateway } = await ready;
      await apiGateway.send(new sdk.FlushStageAuthorizersCacheCommand({ restApiId, stageName }));
      return;
    } catch (err) {
      if (attempt >= ATTEMPTS) {
        // The change is committed; only its effect on cached credentials waits (up to the TTL). Page someone.
        logger.error('authorizer cache flush failed; revocations wait for the cache TTL', { err, restApiId, stageName });
        recordMetric(METRICS.authorizerCacheFlushFailed, 1);
        return;
      }
      await pause(FIRST_BACKOFF_MS * 2 ** (attempt - 1));
    }
  }
}

/**
 * Flush the stage's authorizer cache after a change of credentials (a key
 * revoked, a user suspended, deleted or given another role, a plan changed),
 * so the very next request is authorized afresh. Call it after the change is
 * stored; it resolves once a flush that started after the call has finished.
 * Debounced: calls while a flush runs share the one queued after it (API
 * Gateway's control plane takes a few calls a second). Retried with backoff;
 * a flush that still fails is logged and counted (METRICS.authorizerCacheFlushFailed,
 * alarmed), never thrown: the change itself succeeded. No-op without a cache.
 */
export function flushAuthorizerCache(): Promise<void> {
  const settings = authorizerCacheSettings();
  const { AUTHORIZER_CACHE_REST_API_ID: restApiId, AUTHORIZER_CACHE_STAGE: stageName, AUTHORIZER_CACHE_TTL_SECONDS: ttl } = settings;
  if (!restApiId || !stageName || ttl === 0) return Promise.resolve();
  if (!running) {
    running = flushWithRetries(settings, restApiId, stageName).finally(() => (running = undefined));
    return running;
  }
  // A flush is under way, possibly begun before this change was stored: wait for it, then one more for everyone who asked meanwhile.
  queued ??= running.then(() => {
    queued = undefined;
    return flushAuthorizerCache();
  });
  return queued;
}
