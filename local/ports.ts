import { createServer } from 'node:net';

// Ports are drawn below the kernel's ephemeral range (Linux: 32768-60999). A port picked here is often bound
// later by another process (npm start binds PORT only after its cold build, a minute away under load), and in
// the ephemeral range the kernel may meanwhile hand the same number to any outgoing connection or `listen(0)`
// on the machine: CI once failed with EADDRINUSE that way. Below the range only explicit binds can take it.
const LOW = 20_000;
const HIGH = 32_000;
/**
 * The test runner's workers (VITEST_POOL_ID 1, 2, ...) each draw from a slice of their own, any other process (the
 * runner's main process, the bench) from slice 0: two workers picking at once never hand out the same number (a
 * stack bound its PORT a minute after the pick and found it taken, with three workers).
 */
const SLICES = 8;
const slice = (Number(process.env.VITEST_POOL_ID) || 0) % SLICES;
const SLICE_SIZE = Math.floor((HIGH - LOW) / SLICES);
const SLICE_LOW = LOW + slice * SLICE_SIZE;

const canBind = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    // Unspecified host: the servers listen on every interface (`::`, which covers IPv4 too).
    s.listen(port, () => s.close(() => resolve(true)));
  });

/**
 * Ports this process has handed out. Some are bound long after they are picked (a stack's PORT after its cold
 * build): still free when checked, a second pick could hand out the same number.
 */
const handedOut = new Set<number>();

/** A TCP port free on this machine right now, and not handed out by this process before (for emulators and servers started on demand). */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = SLICE_LOW + Math.floor(Math.random() * SLICE_SIZE);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canBind(port)) return port;
  }
  throw new Error(`no free TCP port found between ${SLICE_LOW} and ${SLICE_LOW + SLICE_SIZE}`);
}
