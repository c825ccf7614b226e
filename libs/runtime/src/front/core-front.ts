import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrellisConfig } from '@trellis/config';
import type { EventLoopDelay, TrellisGrpcService } from '@trellis/grpc-edge';
import { READINESS_TIMEOUT_MS, checkWithin } from '@trellis/observability';
import type { Logger, TrellisMetrics } from '@trellis/observability';
import { startFrontThread } from './front-thread';
import type { FrontThread } from './front-thread';
import type { RunningCalls } from './running-calls';

/** How often the core runs its readiness check for the front to answer /readyz from. */
const READINESS_REPORT_INTERVAL_MS = 1_000;

/** Where the core listens when a front owns the public ports: Unix sockets in a directory only this user can enter. */
export interface CoreSockets {
  /** For the core's gRPC server and the front's channel to it. */
  readonly grpcUrl: string;
  /** For the core's HTTP server (metrics, the HTTP API). */
  readonly httpSocket: string;
  remove(): void;
}

export function coreSockets(): CoreSockets {
  // mkdtemp creates the directory with mode 0700: no other user can connect to the sockets.
  const dir = mkdtempSync(join(tmpdir(), 'trellis-core-'));
  return {
    grpcUrl: `unix://${join(dir, 'grpc.sock')}`,
    httpSocket: join(dir, 'http.sock'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface CoreFrontOptions {
  readonly config: TrellisConfig;
  readonly services: readonly TrellisGrpcService[];
  readonly sockets: CoreSockets;
  /** The core's event loop, started: its ticks are the front's heartbeat and delay reading. */
  readonly loopDelay: EventLoopDelay;
  /** The calls the core is running (counted by `RunningCallsInterceptor`). */
  readonly runningCalls: RunningCalls;
  readonly readiness: () => Promise<void>;
  readonly metrics: TrellisMetrics;
  readonly logger: Logger;
}

/** The front as the core sees it: its public ports, serving status, and a stop. */
export interface CoreFront {
  readonly grpcPort: number;
  readonly httpPort: number;
  setServing(serving: boolean): void;
  close(): Promise<void>;
}

/**
 * Starts the front thread for a core already listening on `sockets`: it owns the public gRPC
 * and HTTP ports, sheds load and answers health there, and its refusals and slot counts land in
 * the core's metrics as the interceptor's would. The core reports its readiness every second.
 */
export async function startCoreFront(options: CoreFrontOptions): Promise<CoreFront> {
  const { config, metrics, logger } = options;
  const thread: FrontThread = await startFrontThread(
    {
      grpcHost: config.grpcHost,
      grpcPort: config.grpcPort,
      httpHost: config.httpHost,
      httpPort: config.httpPort,
      coreGrpcAddress: options.sockets.grpcUrl,
      coreHttpSocket: options.sockets.httpSocket,
      protoFiles: options.services.map((s) => `trellis/v1/${s}.proto`),
      admission: config.admission,
      apiKeys: config.apiKeys,
      ...(config.internalToken === undefined ? {} : { internalToken: config.internalToken }),
      coreLoop: { shared: options.loopDelay.shared, intervalMs: options.loopDelay.intervalMs },
      coreCalls: options.runningCalls.shared,
    },
    {
      counts: (inFlight, queued) => {
        metrics.grpcInFlight.set(inFlight);
        metrics.grpcQueued.set(queued);
      },
      refused: ({ method, reason, seconds }) => {
        metrics.grpcRejected.inc({ method, reason });
        metrics.grpcRequests.inc({ method, code: 'RESOURCE_EXHAUSTED' });
        metrics.grpcDuration.observe({ method, code: 'RESOURCE_EXHAUSTED' }, seconds);
      },
    },
    (reason) => {
      // Without its front the process has no public ports: stop, so a supervisor restarts it.
      logger.fatal({ reason }, 'the front thread ended; stopping');
      process.exit(1);
    },
  );
  let checking = false;
  const report = () => {
    if (checking) return;
    checking = true;
    checkWithin(options.readiness, READINESS_TIMEOUT_MS, 'readiness check').then(
      () => thread.reportReadiness(true),
      (error: Error) => thread.reportReadiness(false, error.message),
    ).finally(() => (checking = false));
  };
  report();
  const reporter = setInterval(report, READINESS_REPORT_INTERVAL_MS);
  reporter.unref();
  return {
    grpcPort: thread.grpcPort,
    httpPort: thread.httpPort,
    setServing: (serving) => thread.setServing(serving),
    close: async () => {
      clearInterval(reporter);
      await thread.close();
    },
  };
}
