import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import type { FunctionDef } from './deployment.ts';

const WORKER = join(import.meta.dirname, 'worker.mjs');

/** What an invocation that failed inside the function reports (Lambda's error shape). */
export class FunctionError extends Error {
  constructor(
    readonly functionName: string,
    readonly errorType: string,
    errorMessage: string,
  ) {
    super(`${functionName}: ${errorType}: ${errorMessage}`);
    this.name = 'FunctionError';
  }
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * One deployed function, run locally as Lambda runs it: its synthesized
 * bundle imported in its own worker thread (own module state, own
 * `process.env`, heap capped at the function's memory), started on the first
 * invocation (a cold start) and kept warm. Each invocation gets the
 * function's timeout; at most `reservedConcurrency` (or the local stack's
 * `concurrency`, when lower) run at once, further ones wait their turn. A
 * crashed worker fails what it was running and is replaced
 * on the next invocation, as Lambda replaces a failed sandbox; so is one
 * whose init failed (that invocation reports the init error).
 *
 * One worker serves concurrent invocations (Lambda would start more
 * containers): module state is shared between them, as it already was when
 * everything ran in one process.
 */
export class LocalFunction {
  private worker?: Worker;
  private ready?: Promise<Worker>;
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly logListeners = new Set<(line: string) => void>();
  /** Faults the function's SDK clients injected (FAULTS, decisions §19), by `service:kind`, across its sandboxes. */
  readonly faults = new Map<string, number>();
  private readonly heapAsks = new Map<number, (bytes: number | undefined) => void>();
  /** Cold starts, invocations and failed invocations so far, and the last init time (ms): the bench and tests read them. */
  coldStarts = 0;
  invocations = 0;
  failures = 0;
  lastInitMs?: number;

  constructor(
    readonly def: FunctionDef,
    private readonly bundleFile: string,
    private env: Record<string, string>,
    /** Called when the function's DynamoDB client has committed a write to the table (LocalLambda.afterWrites). */
    private readonly wrote: () => void = () => {},
    /** The nice value of its worker's thread (LocalLambdaOptions.niceOf). */
    private readonly nice = 0,
    /** At most this many invocations at once, besides the template's reserved concurrency (LocalLambdaOptions.concurrencyOf). */
    private readonly concurrency?: number,
  ) {}

  /** Read the function's log lines (instead of this process's output) until the returned function is called. */
  onLog(listener: (line: string) => void): () => void {
    this.logListeners.add(listener);
    return () => this.logListeners.delete(listener);
  }

  /**
   * Lambda's UpdateFunctionConfiguration for the environment: the running
   * sandbox is retired, and the next invocation cold-starts with `changes`
   * applied (a value of undefined removes the variable).
   */
  async updateEnvironment(changes: Record<string, string | undefined>): Promise<void> {
    const env = { ...this.env, ...changes };
    for (const [k, v] of Object.entries(changes)) if (v === undefined) delete env[k];
    this.env = env as Record<string, string>;
    await this.stop();
  }

  get name(): string {
    return this.def.name;
  }

  /** Start the worker now (a provisioned container), resolving once the bundle is imported. */
  warm(): Promise<void> {
    return this.start().then(() => undefined);
  }

  private start(): Promise<Worker> {
    if (this.ready) return this.ready;
    const worker = new Worker(WORKER, {
      env: this.env,
      execArgv: [],
      workerData: { file: this.bundleFile, functionName: this.def.name, memoryMb: this.def.memoryMb, nice: this.nice },
      resourceLimits: { maxOldGenerationSizeMb: this.def.memoryMb },
      stdout: true,
      stderr: true,
    });
    // The function's log stream (CloudWatch Logs in AWS): each line to whoever reads it, else to this process's output.
    for (const [stream, out] of [
      [worker.stdout, process.stdout],
      [worker.stderr, process.stderr],
    ] as const) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        if (this.logListeners.size) this.logListeners.forEach((l) => l(line));
        else out.write(`${line}\n`);
      });
    }
    this.coldStarts += 1;
    this.ready = new Promise<Worker>((resolve, reject) => {
      const onMessage = (m: {
        type?: string;
        id?: number;
        result?: unknown;
        error?: { errorType: string; errorMessage: string };
        initMs?: number;
        service?: string;
        kind?: string;
        heapUsed?: number;
      }) => {
        if (m.type === 'wrote') return this.wrote();
        if (m.type === 'fault') {
          const key = `${m.service}:${m.kind}`;
          this.faults.set(key, (this.faults.get(key) ?? 0) + 1);
          return;
        }
        if (m.type === 'heap' || m.type === 'drained') {
          this.heapAsks.get(m.id!)?.(m.heapUsed);
          this.heapAsks.delete(m.id!);
          return;
        }
        if (m.type === 'ready') {
          this.lastInitMs = m.initMs;
          return resolve(worker);
        }
        if (m.type === 'init-error') {
          // As Lambda does after a failed init: this invocation fails, the next one initialises a new sandbox.
          reject(new FunctionError(this.def.name, `Init: ${m.error!.errorType}`, m.error!.errorMessage));
          void worker.terminate();
          return;
        }
        const p = this.pending.get(m.id!);
        if (!p) return;
        this.pending.delete(m.id!);
        clearTimeout(p.timer);
        if (m.error) p.reject(new FunctionError(this.def.name, m.error.errorType, m.error.errorMessage));
        else p.resolve(m.result);
      };
      worker.on('message', onMessage);
      const down = (err: Error) => {
        reject(err);
        for (const [id, p] of this.pending) {
          clearTimeout(p.timer);
          p.reject(new FunctionError(this.def.name, 'Runtime.ExitError', err.message));
          this.pending.delete(id);
        }
        if (this.worker === worker) {
          this.worker = undefined;
          this.ready = undefined;
        }
      };
      worker.on('error', down);
      worker.on('exit', (code) => down(new Error(`the runtime exited with code ${code}`)));
    });
    this.worker = worker;
    return this.ready;
  }

  private async slot(): Promise<void> {
    const limit = Math.min(this.def.reservedConcurrency ?? Infinity, this.concurrency ?? Infinity);
    if (this.running < limit) {
      this.running += 1;
      return;
    }
    await new Promise<void>((wake) => this.waiting.push(wake));
    this.running += 1;
  }

  private release() {
    this.running -= 1;
    this.waiting.shift()?.();
  }

  /** Invoke with an event; resolves with the handler's result, rejects with a FunctionError. */
  async invoke<T = unknown>(event: unknown): Promise<T> {
    await this.slot();
    this.invocations += 1;
    try {
      const worker = await this.start();
      const id = ++this.seq;
      const timeoutMs = this.def.timeoutSeconds * 1000;
      return await new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new FunctionError(this.def.name, 'Sandbox.Timedout', `Task timed out after ${this.def.timeoutSeconds.toFixed(2)} seconds`));
        }, timeoutMs);
        this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
        worker.postMessage({ id, event, deadline: Date.now() + timeoutMs });
      });
    } catch (err) {
      this.failures += 1;
      throw err;
    } finally {
      this.release();
    }
  }

  /** The running sandbox's used heap in bytes after a full collection (undefined when none runs): the bench's soak compares it over time. */
  async heapUsed(): Promise<number | undefined> {
    const worker = this.worker;
    if (!worker || !this.ready) return undefined;
    await this.ready.catch(() => undefined);
    const id = ++this.seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.heapAsks.delete(id);
        resolve(undefined);
      }, 5_000);
      this.heapAsks.set(id, (bytes) => {
        clearTimeout(timer);
        resolve(bytes);
      });
      worker.postMessage({ type: 'heap', id });
    });
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    const ready = this.ready;
    this.worker = undefined;
    this.ready = undefined;
    if (!worker) return;
    // Work a handler left running after it returned (the outbox publisher's deletes, shared/events/publisher.ts)
    // finishes first, as it would in a Lambda sandbox that lives on: a clean stop leaves nothing to publish twice.
    if (await ready?.then(() => true).catch(() => false)) await this.drain(worker);
    await worker.terminate();
  }

  /** Ask the worker to settle what its handlers left running (local/lambda/worker.mjs), waiting at most 5 s. */
  private drain(worker: Worker): Promise<void> {
    const id = ++this.seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.heapAsks.delete(id);
        resolve();
      }, 5_000);
      this.heapAsks.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
      worker.postMessage({ type: 'drain', id });
    });
  }
}
