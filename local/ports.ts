import { createServer } from 'node:net';

// Ports are drawn below the kernel's ephemeral range (Linux: 32768-60999). A port picked here is often bound
// later by another process (npm start binds PORT only after its cold build, a minute away under load), and in
// the ephemeral range the kernel may meanwhile hand the same number to any outgoing connection or `listen(0)`
// on the machine: CI once failed with EADDRINUSE that way. Below the range only explicit binds can take it.
const LOW = 20_000;
const HIGH = 32_000;

const canBind = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    // Unspecified host: the servers listen on every interface (`::`, which covers IPv4 too).
    s.listen(port, () => s.close(() => resolve(true)));
  });

/** A TCP port free on this machine right now (for emulators and servers started on demand). */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (await canBind(port)) return port;
  }
  throw new Error(`no free TCP port found between ${LOW} and ${HIGH}`);
}
