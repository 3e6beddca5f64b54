// One warm Lambda container: a worker thread with its own module state and its own process.env (exactly the
// environment local/lambda/runtime.ts gives it), which imports the function's bundle once and then serves
// invocations as Lambda's runtime interface would. Plain JavaScript, so the worker loads no TypeScript tooling.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import process from 'node:process';
import { setImmediate } from 'node:timers';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';

const { file, functionName, memoryMb, nice } = workerData;
// Lower this thread's priority alone (LocalLambdaOptions.niceOf): on Linux a nice value is a thread's own, and
// os.setPriority of pid 0 sets the calling thread's. Elsewhere (macOS) it would lower the whole process: left alone.
if (nice && process.platform === 'linux') {
  try {
    os.setPriority(nice);
  } catch {
    // refused (a sandbox without setpriority): the usual priority
  }
}

const serializeError = (err) =>
  err instanceof Error ? { errorType: err.name, errorMessage: err.message, stackTrace: String(err.stack ?? '').split('\n') } : { errorType: 'Error', errorMessage: String(err) };

/** A full garbage collection, so a heap reading is what the sandbox retains (`gc` exposed for this worker's use only). */
let gc;
const collectGarbage = () => {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc');
  }
  gc();
};

// Faults the function's SDK clients inject (shared/faults/inject.ts, FAULTS) are counted in the main thread.
globalThis[Symbol.for('support-desk.fault-sink')] = (service, kind) => parentPort.postMessage({ type: 'fault', service, kind });
// A committed write to the table (shared/db/client.ts, WRITE_SINK): the main thread's stream poller reads the stream.
// Writes answered in the same turn of the event loop were all committed before its first report: one report for them.
let writeReported = false;
globalThis[Symbol.for('support-desk.write-sink')] = () => {
  if (writeReported) return;
  writeReported = true;
  parentPort.postMessage({ type: 'wrote' });
  setImmediate(() => (writeReported = false));
};

let handler;
const started = performance.now();
try {
  const mod = await import(pathToFileURL(file).href);
  handler = mod.handler;
  if (typeof handler !== 'function') throw new Error(`${file} exports no handler function`);
  parentPort.postMessage({ type: 'ready', initMs: performance.now() - started });
} catch (err) {
  parentPort.postMessage({ type: 'init-error', error: serializeError(err) });
}

parentPort.on('message', async ({ type, id, event, deadline }) => {
  // The sandbox's heap after a full collection (the bench's soak compares it over time); never an invocation.
  if (type === 'heap') {
    collectGarbage();
    return parentPort.postMessage({ type: 'heap', id, heapUsed: getHeapStatistics().used_heap_size });
  }
  // Before a clean stop: what handlers left running after they returned (each module registers a function to await).
  if (type === 'drain') {
    const hooks = globalThis[Symbol.for('support-desk.drain')] ?? new Set();
    await Promise.allSettled([...hooks].map((settle) => settle()));
    return parentPort.postMessage({ type: 'drained', id });
  }
  const awsRequestId = randomUUID();
  const context = {
    awsRequestId,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION}:000000000000:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  try {
    const result = await handler(event, context);
    parentPort.postMessage({ id, result });
  } catch (err) {
    parentPort.postMessage({ id, error: serializeError(err) });
  }
});
