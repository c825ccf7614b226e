import { request } from 'node:http';

/** One server-sent event. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** Reads a text/event-stream response to its end (or until `stop` says so), event by event. */
export async function readEvents(response: Response, stop: (event: SseEvent) => boolean = () => false): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const lines = block.split('\n').filter((l) => !l.startsWith(':'));
      if (lines.length === 0) continue;
      const event = { event: lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message', data: lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n') };
      events.push(event);
      if (stop(event)) {
        await reader.cancel();
        return events;
      }
    }
  }
}

/**
 * Sends request headers declaring `declaredBytes` (or chunked when undefined) and then writes the
 * body in 64 KB pieces as fast as the connection takes them, only while the server has not answered; resolves with the status and how
 * many body bytes were written before the answer came.
 */
export function sendLargeBody(url: string, headers: Record<string, string>, totalBytes: number, declaredBytes?: number): Promise<{ status: number; body: string; bytesWritten: number }> {
  return new Promise((resolve, reject) => {
    let bytesWritten = 0;
    let answered = false;
    const req = request(url, { method: 'POST', headers: { ...headers, ...(declaredBytes !== undefined ? { 'content-length': String(declaredBytes) } : { 'transfer-encoding': 'chunked' }) } }, (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, bytesWritten }));
      res.on('error', reject);
    });
    req.on('error', (error) => (answered ? undefined : reject(error)));
    req.flushHeaders();
    const piece = Buffer.alloc(64 * 1024, 120);
    // As fast as the connection takes it, as a client uploading a file does: the server's
    // answer has to reach a client that is still writing.
    const pump = () => {
      while (!answered && bytesWritten < totalBytes) {
        bytesWritten += piece.byteLength;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    // Headers first, then a moment for an answer that needs no body.
    setTimeout(pump, declaredBytes !== undefined ? 300 : 0);
  });
}

/**
 * fetch, sending the request again while the server sheds it (429), after the Retry-After it
 * asks for: what a well-behaved HTTP client does, and what keeps these tests steady on a
 * loaded machine, where the server's load shedding is working as designed.
 */
export async function fetchRetryingShed(url: string, init: RequestInit = {}, attempts = 20): Promise<Response> {
  for (let attempt = 1; ; attempt += 1) {
    const response = await fetch(url, init);
    if (response.status !== 429 || attempt === attempts) return response;
    await response.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after') ?? 1)));
  }
}
