/** Run `job` on each item with at most `n` at once (a test's sweep of independent requests). */
export async function inParallel<T>(items: readonly T[], n: number, job: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await job(items[i], i);
      }
    }),
  );
}
