/**
 * Take the SDK's logger middleware out of a client, where the client is made (each SDK client of a process is made
 * once). On every call that middleware copies the command's input and output through a schema-driven filter of
 * sensitive members, even in a client with no logger: it then hands the copies to the SDK's no-op logger. For a
 * DynamoDB Query of 25 items that is about a quarter of the client's CPU per call (docs/performance.md, "The SDK's
 * logger middleware"). No client of ours is given a logger: our own log lines say what a call did.
 */
export function withoutSdkLogger<C extends { middlewareStack: { remove(toRemove: string): boolean } }>(client: C): C {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}
