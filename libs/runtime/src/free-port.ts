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
      if (await canListen(port)) return port;
    }
  }
  return listenAnywhere();
}

function ephemeralRangeStart(): number | undefined {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > 0 ? start : undefined;
  } catch {
    return undefined; // not Linux: take what the kernel gives
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

function listenAnywhere(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
