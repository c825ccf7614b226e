import type { ServerResponse } from 'node:http';

/** How long a connection stays open after the answer that closes it, for the client to read that answer. */
export const LINGER_MS = 2_000;

/**
 * Answers with `Connection: close` and closes the way a server that stopped reading a request
 * body must: once the answer is sent, the write side ends but the socket stays open for
 * LINGER_MS before it is destroyed. A client still sending its body meets a full buffer instead
 * of a closed socket, so it reads the answer; closing at once resets the connection under the
 * client's next write, and Node's HTTP client (the standalone front among them) then reports
 * EPIPE and drops the answer it had already received.
 */
export function closeAfterAnswer(res: ServerResponse): void {
  res.setHeader('connection', 'close');
  const socket = res.socket;
  if (socket === null) return;
  // Node's server calls destroySoon once the last answer on a `Connection: close` socket is sent.
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}
