import { join } from 'node:path';
import { Client, Server, ServerCredentials, credentials } from '@grpc/grpc-js';
import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { Refusal } from '@trellis/grpc-edge';
import { loadSync } from '@grpc/proto-loader';
import type { HealthImplementation } from 'grpc-health-check';
import {
  AdmissionGate,
  GRPC_LOADER_OPTIONS,
  MAX_GRPC_MESSAGE_BYTES,
  RequestLimiter,
  SharedLoopDelay,
  TenantResolver,
  admissionTenant,
  grpcReflection,
  protoDirectory,
} from '@trellis/grpc-edge';
import type { AdmissionReport } from './admission-report';
import { CorePacer } from './core-pacer';
import type { FrontSettings } from './front-messages';
import { forwardCall, passBytes } from './grpc-forwarder';
import { RunningCalls } from './running-calls';

const MESSAGE_LIMITS = { 'grpc.max_receive_message_length': MAX_GRPC_MESSAGE_BYTES, 'grpc.max_send_message_length': MAX_GRPC_MESSAGE_BYTES };

/** Calls in flight get this long to finish at shutdown before they are cut. */
const SHUTDOWN_GRACE_MS = 5_000;

/** The path (`/trellis.v1.RetrievalService/RetrieveChunks`) of every method of the given proto files' services. */
export function methodPaths(protoFiles: readonly string[]): string[] {
  const protoDir = protoDirectory();
  const definition = loadSync(
    protoFiles.map((f) => join(protoDir, f)),
    { ...GRPC_LOADER_OPTIONS, includeDirs: [protoDir] },
  );
  const paths: string[] = [];
  for (const entry of Object.values(definition)) {
    // Message and enum definitions carry a `format`; services are maps of methods.
    if ('format' in entry) continue;
    for (const method of Object.values(entry)) paths.push(method.path);
  }
  return paths;
}

function admissionOf(settings: FrontSettings, report: AdmissionReport): Admission | undefined {
  const { maxConcurrent, maxQueued, maxQueueWaitMs, maxEventLoopDelayMs } = settings.admission;
  if (maxConcurrent === 0) return undefined;
  const limiter = new RequestLimiter({ maxConcurrent, maxQueued, maxQueueWaitMs }, (running, queued) => report.counts(running, queued));
  const delay = new SharedLoopDelay(settings.coreLoop.shared, settings.coreLoop.intervalMs);
  const gate = new AdmissionGate(limiter, maxEventLoopDelayMs > 0 ? { delay, maxMs: maxEventLoopDelayMs } : undefined);
  const running = new RunningCalls(settings.coreCalls);
  return { gate, pacer: new CorePacer(() => running.count()), maxQueueWaitMs };
}

interface Admission {
  readonly gate: AdmissionGate;
  readonly pacer: CorePacer;
  readonly maxQueueWaitMs: number;
}

/**
 * The handler of one method: admission (refused at once, from this thread, when the server is
 * full or the core's loop is behind), then, holding its slot, the call forwarded to the core as
 * soon as the core has started the one before; all within the queue wait, or refused.
 */
function admittedForwarding(path: string, core: Client, admission: Admission | undefined, tenants: TenantResolver, report: AdmissionReport) {
  const method = path.slice(path.lastIndexOf('/') + 1);
  return (call: ServerDuplexStream<Buffer, Buffer>) => {
    if (admission === undefined) return forwardCall(core, call, () => undefined);
    const { gate, pacer, maxQueueWaitMs } = admission;
    const started = performance.now();
    let gone = false;
    let cancel: () => void = () => undefined;
    const refuse = (refusal: Refusal) => {
      report.refused({ method, reason: refusal.reason, seconds: (performance.now() - started) / 1000 });
      call.emit('error', refusal);
    };
    cancel = gate.enter(
      admissionTenant(tenants, call.metadata),
      (slot) => {
        if (gone) return slot.release();
        cancel = pacer.submit(
          started + maxQueueWaitMs,
          (ended) =>
            forwardCall(core, call, () => {
              ended();
              slot.release();
            }),
          () => {
            slot.release();
            refuse(gate.refusal('queue_timeout'));
          },
        );
      },
      refuse,
    );
    call.once('cancelled', () => {
      gone = true;
      cancel();
    });
  };
}

export interface FrontGrpc {
  readonly port: number;
  /** Stops taking calls, lets those in flight finish (cut after 5 s), closes the channel to the core. */
  close(): Promise<void>;
}

/**
 * The public gRPC server of the front: every method of the served services forwarded to the
 * core behind admission control, and the health and reflection services answered here, so they
 * answer while the core is busy.
 */
export async function startFrontGrpc(settings: FrontSettings, health: HealthImplementation, report: AdmissionReport): Promise<FrontGrpc> {
  const core = new Client(settings.coreGrpcAddress, credentials.createInsecure(), MESSAGE_LIMITS);
  const server = new Server(MESSAGE_LIMITS);
  const admission = admissionOf(settings, report);
  const tenants = new TenantResolver(settings.apiKeys, settings.internalToken);
  for (const path of methodPaths(settings.protoFiles)) {
    server.register(path, admittedForwarding(path, core, admission, tenants, report), passBytes, passBytes, 'bidi');
  }
  health.addToServer(server);
  grpcReflection(settings.protoFiles).addToServer(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${settings.grpcHost}:${settings.grpcPort}`, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.forceShutdown(), SHUTDOWN_GRACE_MS);
        server.tryShutdown(() => {
          clearTimeout(cut);
          core.close();
          resolve();
        });
      }),
  };
}
