/**
 * The local stack's SQS (and S3) emulator: fauxqs, started in this process,
 * and the queue settings this process's own tools read.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import { dlqName, QUEUES } from '#app/topology.ts';
import { localQueueUrl } from './lambda/index.ts';
import { commitWithoutFsync, serveInProcess } from './sqs-calls.ts';
import { previousPort, releaseHeldMessages, rememberPort } from './sqs-state.ts';

export interface LocalSqs {
  endpoint: string;
  /** Drop every message and object, keeping the queues and buckets (a test worker's next file starts on empty ones). */
  reset(): void;
  stop(): Promise<void>;
}

/**
 * Start fauxqs in-process; the queues are the template's, created by createLocalQueues (local/lambda/queues.ts).
 * It serves S3 on the same endpoint (the template's buckets: local/lambda/buckets.ts); with `s3Dir` its objects are
 * files there (DATA_DIR/s3), kept across restarts, otherwise in memory.
 * With `dataDir` the queues live there (SQLite, written through on every change) and survive a restart, even
 * after a SIGKILL: the last run's port is kept when `port` is 0 (the persisted queues' URLs carry it), and what
 * the last run was holding is visible again (local/sqs-state.ts).
 */
export async function startLocalSqs(port: number, opts: { s3Dir?: string; dataDir?: string } = {}): Promise<LocalSqs> {
  const { dataDir } = opts;
  const server = await startFauxqs({ port: port || (dataDir ? await previousPort(dataDir) : 0), logger: false, dataDir, ...(opts.s3Dir ? { s3StorageDir: opts.s3Dir } : {}) });
  if (dataDir) {
    const sqs = new SQSClient({ region: 'us-east-1', endpoint: server.address, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      await releaseHeldMessages(server, sqs);
      rememberPort(dataDir, server.port);
      await commitWithoutFsync(server);
    } catch (err) {
      await server.stop();
      throw err;
    } finally {
      sqs.destroy();
    }
  }
  // The stack's own calls to it (the bus, the pollers) go to it in process (local/sqs-calls.ts).
  const unserve = await serveInProcess(server);
  return {
    endpoint: server.address,
    reset: () => server.reset(),
    stop: () => {
      unserve();
      return server.stop();
    },
  };
}

/** The queue settings this process's own tools read (dead-letter listing, redrive, tests' fixtures). */
export function pipelineEnvVars(sqsEndpoint: string): Record<string, string> {
  const vars: Record<string, string> = { SQS_ENDPOINT: sqsEndpoint };
  for (const q of QUEUES) {
    if (q.urlEnv) vars[q.urlEnv] = localQueueUrl(sqsEndpoint, q.name);
    if (q.dlqUrlEnv) vars[q.dlqUrlEnv] = localQueueUrl(sqsEndpoint, dlqName(q.name));
  }
  return vars;
}
