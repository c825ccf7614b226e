import { Agent, createServer, request } from 'node:http';
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeAfterAnswer } from '@trellis/grpc-edge';
import type { CoreState, Verdict } from './core-state';

/** Headers about one connection, not the message: each hop sets its own. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

function answer(res: ServerResponse, verdict: Verdict, okBody: string, failedPrefix: string): void {
  res.writeHead(verdict.ok ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(verdict.ok ? okBody : `${failedPrefix}: ${verdict.reason}\n`);
}

/**
 * Sends the request body on to the core, each piece after the reads of the current turn, so an
 * answer the core sent before it stopped reading (413 past the upload limit, then it closes)
 * is seen before another piece is written into the closed socket; `stop` ends the relay.
 */
function relayBody(req: IncomingMessage, upstream: ClientRequest): { stop(): void } {
  let stopped = false;
  req.on('data', (piece: Buffer) => {
    req.pause();
    setImmediate(() => {
      if (stopped) return;
      if (upstream.write(piece)) req.resume();
      else upstream.once('drain', () => req.resume());
    });
  });
  req.on('end', () => setImmediate(() => stopped || upstream.end()));
  return { stop: () => (stopped = true) };
}

/** Passes one request to the core's HTTP server and its response back, streamed both ways (event streams too). */
function proxy(req: IncomingMessage, res: ServerResponse, socketPath: string, agent: Agent): void {
  let answered = false;
  const upstream = request({ socketPath, agent, method: req.method, path: req.url, headers: endToEnd(req.headers) }, (response) => {
    const headers = endToEnd(response.headers);
    // The core reads no more of this request: neither does the front, and the caller is told so.
    const closing = response.headers.connection === 'close';
    if (closing) {
      body.stop();
      delete headers['connection'];
      closeAfterAnswer(res);
    }
    res.writeHead(response.statusCode ?? 502, headers);
    response.pipe(res);
    response.once('end', () => {
      answered = true;
      // The rest of the body will not be sent: the core's connection goes, not back to the pool.
      if (closing) upstream.destroy();
    });
  });
  upstream.on('error', (error) => {
    if (answered) return;
    if (res.headersSent) return void res.destroy();
    res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end(`the server could not answer: ${error.message}\n`);
  });
  // A caller that goes away (a closed event stream) ends the request to the core too.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  // The headers go at once, not with the first piece of body: the core may answer from them
  // alone (413 for a declared length past the limit) before the caller sends its body.
  upstream.flushHeaders();
  const body = relayBody(req, upstream);
}

/**
 * The public HTTP port of the front: `/healthz` and `/readyz` answered here from the core's
 * cached state, so they answer at once while the core is busy; everything else (metrics, the
 * HTTP API and console) passed to the core's HTTP server on its Unix socket.
 */
export async function startFrontHttp(host: string, port: number, state: CoreState, coreSocket: string): Promise<{ server: Server; port: number }> {
  const agent = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return answer(res, state.liveness(), 'ok\n', 'not live');
    if (path === '/readyz') return answer(res, state.readiness(), 'ready\n', 'not ready');
    proxy(req, res, coreSocket, agent);
  });
  server.on('close', () => agent.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}
