import { afterAll, afterEach, inject } from 'vitest';
import { startDynamoDbProxy, type DdbCallStats, type StoreFailureHook } from '../../local/dynamodb-proxy.ts';
import { routeStoreThrough } from './lambda.ts';

/**
 * Route this file's deployed functions to the run's DynamoDB Local through a
 * proxy (local/dynamodb-proxy.ts) whose hook can answer their requests in
 * DynamoDB's place: a throttle or a 500 reaches the function's SDK over the
 * wire and is retried there as in AWS. Call before useGateway / usePipeline.
 * The hook is removed after each test (`injectForAll`'s is kept until removed,
 * for tests that run side by side); the test process's own calls (fixtures)
 * go straight to DynamoDB Local and are never affected (nor counted).
 */
export function useStoreProxy(opts: { consumedCapacity?: boolean } = {}): {
  inject(hook: StoreFailureHook | undefined): void;
  injectForAll(hook: StoreFailureHook | undefined): void;
  reset(): Promise<DdbCallStats>;
} {
  const proxy = startDynamoDbProxy({ upstream: inject('dynamodbEndpoint'), consumedCapacity: opts.consumedCapacity });
  routeStoreThrough(proxy.then((p) => p.endpoint));
  let hook: StoreFailureHook | undefined;
  let kept: StoreFailureHook | undefined;
  void proxy.then((p) => p.inject((operation, request) => hook?.(operation, request) ?? kept?.(operation, request)));
  afterEach(() => {
    hook = undefined;
  });
  afterAll(async () => (await proxy).stop());
  return {
    inject(h) {
      hook = h;
    },
    /** A hook kept across tests (concurrent ones share it, so it tells their requests apart) until removed. */
    injectForAll(h) {
      kept = h;
    },
    /** What the functions asked of the store since the last reset (with consumedCapacity: items read and capacity too). */
    reset: async () => (await proxy).reset(),
  };
}
