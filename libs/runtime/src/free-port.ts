import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Below the kernel's ephemeral range, so no outgoing connection can take the port we chose. */
const LOWEST_PORT = 10_000;
const ATTEMPTS = 50;

/**
 * A loopback TCP port that was free a moment ago (for in-process servers and tests).
 *
 * A port the kernel hands out for `listen(0)` lies in its ephemeral range, the range it also
 * gives to the local end of every outgoing connection: between our probe and the server's own
 * `listen`, a client socket (a Kafka or SQL connection, a fetch) can take it, and the server
 * fails with EADDRINUSE. So the port is drawn at random from below that range and probed.
 */
export async function freePort(): Promise<number> {
  const ephemeralStart = ephemeralRangeStart();
  if (ephemeralStart !== undefined && ephemeralStart - LOWEST_PORT > 1_000) {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const port = LOWEST_PORT + Math.floor(Math.random() * (ephemeralStart - LOWEST_PORT));
      if ((await probe(port)) !== undefined) return port;
    }
  }
  const any = await probe(0);
  if (any === undefined) throw new Error('no free loopback port');
  return any;
}

function ephemeralRangeStart(): number | undefined {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > 0 ? start : undefined;
  } catch {
    return undefined; // not Linux: take what the kernel gives
  }
}

/** Listens on `port` (0: any the kernel gives) and closes again: the port, or undefined if it was taken. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : undefined));
    });
  });
}
