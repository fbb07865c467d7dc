import fs from 'node:fs';
import net from 'node:net';

/**
 * The lowest port the kernel hands out as the source port of outgoing connections. A port taken from
 * below it cannot be grabbed between our check and the child's bind by some test's outgoing
 * connection (the race `listen(0)` has on a busy machine: a child then fails with EADDRINUSE).
 */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}
const BELOW_EPHEMERAL = ephemeralLow();
const LOWEST = 10_000;

function tryListen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const { port: taken } = server.address() as net.AddressInfo;
      server.close(() => resolve(taken));
    });
  });
}

/**
 * A port nobody listens on right now, for a child process to bind: a random free one between 10,000
 * and the kernel's ephemeral range (see BELOW_EPHEMERAL), else (after 50 tries) one the system picks.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const candidate = LOWEST + Math.floor(Math.random() * (BELOW_EPHEMERAL - LOWEST));
    const port = await tryListen(candidate);
    if (port !== null) return port;
  }
  return (await tryListen(0))!;
}
