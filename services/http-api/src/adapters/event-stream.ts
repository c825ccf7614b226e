import type { ServerResponse } from 'node:http';
import { fromGrpcError } from './http-status';

/** A text/event-stream response; `closed` turns true when the client goes away. */
export class EventStream {
  closed = false;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(private readonly res: ServerResponse, heartbeatMs = 15_000) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.flushHeaders();
    res.on('close', () => this.end());
    // A comment now and then keeps proxies from timing out a quiet stream.
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), heartbeatMs);
  }

  /** One event; `data` is written as one `data:` line per line of text. */
  send(event: string | undefined, data: string): void {
    const lines = data.split('\n').map((line) => `data: ${line}`).join('\n');
    this.write(`${event !== undefined ? `event: ${event}\n` : ''}${lines}\n\n`);
  }

  /** An `error` event carrying the problem details a failed call maps to. */
  fail(error: unknown): void {
    const { status, title, detail, grpcStatus } = fromGrpcError(error);
    this.send('error', JSON.stringify({ status, title, detail, grpcStatus }));
  }

  end(): void {
    if (!this.closed) {
      this.closed = true;
      clearInterval(this.heartbeat);
      this.res.end();
    }
  }

  private write(text: string): void {
    if (!this.closed) this.res.write(text);
  }
}
