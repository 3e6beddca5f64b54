/**
 * The pipeline's invocations of the deployed functions (the stream's, the
 * queues' and the schedules'), counted: how many run now and how many have
 * started, which is how the pipeline tells that it is drained.
 */
export class Invocations {
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  /** Invocations started so far. */
  started = 0;

  /** Run one invocation, counted while it runs. */
  async run<T>(invoke: () => Promise<T>): Promise<T> {
    this.running++;
    this.started++;
    try {
      return await invoke();
    } finally {
      if (--this.running === 0) this.idleWaiters.splice(0).forEach((wake) => wake());
    }
  }

  get busy(): boolean {
    return this.running > 0;
  }

  /** Resolves once no invocation runs. */
  idle(): Promise<void> {
    return this.running ? new Promise((resolve) => this.idleWaiters.push(resolve)) : Promise.resolve();
  }
}
