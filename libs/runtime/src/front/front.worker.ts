import { parentPort, workerData } from 'node:worker_threads';
import { SharedLoopDelay } from '@trellis/grpc-edge';
import { closeHttpServer } from '@trellis/observability';
import { HealthImplementation } from 'grpc-health-check';
import { AdmissionReport } from './admission-report';
import { CoreState } from './core-state';
import type { FromFront, FrontSettings, ToFront } from './front-messages';
import { startFrontGrpc } from './grpc-front-server';
import { startFrontHttp } from './http-front';

/** How often the gRPC health status is re-derived from the core's heartbeat. */
const HEALTH_REFRESH_MS = 1_000;

/**
 * The front thread's entry: the public gRPC and HTTP ports, answering health itself and
 * forwarding the rest to the core (the main thread), with what the core reports kept in a
 * `CoreState`. Started by `startFrontThread`.
 */
async function main(): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('front.worker runs as a worker thread (startFrontThread)');
  const settings = workerData as FrontSettings;
  const send = (message: FromFront) => port.postMessage(message);
  const state = new CoreState(new SharedLoopDelay(settings.coreLoop.shared, settings.coreLoop.intervalMs));
  const health = new HealthImplementation({ '': 'NOT_SERVING' });
  const refreshHealth = () => health.setStatus('', state.grpcServing() ? 'SERVING' : 'NOT_SERVING');
  const refresher = setInterval(refreshHealth, HEALTH_REFRESH_MS);
  try {
    const grpc = await startFrontGrpc(settings, health, new AdmissionReport(send));
    const http = await startFrontHttp(settings.httpHost, settings.httpPort, state, settings.coreHttpSocket);
    port.on('message', (message: ToFront) => {
      switch (message.kind) {
        case 'serving':
          state.setServing(message.serving);
          return refreshHealth();
        case 'readiness':
          return state.reportReadiness(message.ready, message.reason);
        case 'close':
          clearInterval(refresher);
          // HTTP first: the HTTP API's requests in flight still make gRPC calls through here.
          void closeHttpServer(http.server)
            .then(() => grpc.close())
            .then(() => send({ kind: 'closed' }));
          return;
      }
    });
    send({ kind: 'listening', grpcPort: grpc.port, httpPort: http.port });
  } catch (error) {
    clearInterval(refresher);
    send({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
  }
}

void main();
