import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

/**
 * Requests the HTTP API answered, by route template (`/api/v1/knowledge-bases/{knowledgeBase}`,
 * never the names or ids in the path: no tenant data in labels), method and status; and their
 * duration until the response ended (a whole event stream for the streaming routes).
 */
export class HttpMetrics {
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly duration: Histogram<'route' | 'method'>;

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'trellis_http_requests_total',
      help: 'HTTP API requests answered, by route template, method and status code.',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'trellis_http_request_duration_seconds',
      help: 'HTTP API request duration until the response ended (event streams: the whole stream).',
      labelNames: ['route', 'method'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
      registers: [registry],
    });
  }

  /** Counts the response when it is finished or abandoned; `route()` is read then, once it is known. */
  observe(req: IncomingMessage, res: ServerResponse, route: () => string): void {
    const started = performance.now();
    res.once('close', () => {
      const labels = { route: route(), method: req.method ?? 'GET' };
      this.requests.inc({ ...labels, status: String(res.statusCode) });
      this.duration.observe(labels, (performance.now() - started) / 1000);
    });
  }
}
