import type { RejectReason, RequestLimits } from '@trellis/grpc-edge';

/**
 * What the front thread is started with (its `workerData`): where to listen, where the core
 * listens, how to admit calls, and the core's event-loop ticks in shared memory.
 */
export interface FrontSettings {
  readonly grpcHost: string;
  readonly grpcPort: number;
  readonly httpHost: string;
  readonly httpPort: number;
  /** The core's gRPC server, on a socket only this process's user can reach (`unix:///…`). */
  readonly coreGrpcAddress: string;
  /** The core's HTTP server (metrics, the HTTP API), a Unix socket path. */
  readonly coreHttpSocket: string;
  /** Proto files (under proto/) of the services served, as `trellis/v1/<name>.proto`. */
  readonly protoFiles: readonly string[];
  /** Load shedding; `maxConcurrent` 0 forwards every call unlimited. */
  readonly admission: RequestLimits & { readonly maxEventLoopDelayMs: number };
  /** API keys to tenants and the internal token, to put each call in its tenant's queue. */
  readonly apiKeys: ReadonlyMap<string, string>;
  readonly internalToken?: string;
  /** `EventLoopDelay.shared` and its tick interval: the core's heartbeat and delay. */
  readonly coreLoop: { readonly shared: SharedArrayBuffer; readonly intervalMs: number };
  /** `RunningCalls.shared`: the calls the core is running. */
  readonly coreCalls: SharedArrayBuffer;
}

/** Messages from the core (main thread) to the front. */
export type ToFront =
  /** The core's overall gRPC health status (NOT_SERVING until start-up completes and from shutdown on). */
  | { readonly kind: 'serving'; readonly serving: boolean }
  /** The outcome of the core's latest readiness check (database and event bus). */
  | { readonly kind: 'readiness'; readonly ready: boolean; readonly reason?: string }
  /** Stop taking calls, let those in flight finish, then answer `closed`. */
  | { readonly kind: 'close' };

/** A refused call, for the core's metrics. */
export interface FrontRejection {
  readonly method: string;
  readonly reason: RejectReason;
  readonly seconds: number;
}

/** Messages from the front to the core. */
export type FromFront =
  | { readonly kind: 'listening'; readonly grpcPort: number; readonly httpPort: number }
  | { readonly kind: 'failed'; readonly message: string }
  /** Admission counts since the last report: calls running and waiting now, calls refused. */
  | { readonly kind: 'admission'; readonly inFlight: number; readonly queued: number; readonly rejected: readonly FrontRejection[] }
  | { readonly kind: 'closed' };
