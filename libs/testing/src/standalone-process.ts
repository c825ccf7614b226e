import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, waitFor } from './free-port';

export interface StandaloneProcess {
  readonly grpcAddress: string;
  readonly httpUrl: string;
  readonly dataDir: string;
  /** Everything the process printed, for assertions and failure messages. */
  output(): string;
  /** SIGTERM, then wait for exit; keeps the data directory. */
  stop(): Promise<number | null>;
  /** Stops and deletes the data directory. */
  dispose(): Promise<void>;
}

const ROOT = resolve(__dirname, '../../..');

/** How often a start that lost its port to another process (EADDRINUSE) is tried again on new ports. */
const PORT_ATTEMPTS = 3;

/**
 * Starts the built standalone server (`services/standalone/dist/main.js`) as a child process
 * on free ports, and waits until it answers /healthz.
 */
export async function startStandaloneProcess(options: { env?: Record<string, string>; dataDir?: string } = {}): Promise<StandaloneProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'trellis-test-'));
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePorts(dataDir, options.env);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === PORT_ATTEMPTS) throw error;
    }
  }
}

class PortTaken extends Error {}

/** The first line of the banner services/standalone/src/main.ts prints once the server has started. */
const BANNER = 'Trellis is running:';

async function startOnFreePorts(dataDir: string, env: Record<string, string> | undefined): Promise<StandaloneProcess> {
  const grpcPort = await freePort();
  const httpPort = await freePort();
  let log = '';
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'services/standalone/dist/main.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      TRELLIS_DATA_DIR: dataDir,
      TRELLIS_GRPC_PORT: String(grpcPort),
      TRELLIS_HTTP_PORT: String(httpPort),
      TRELLIS_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  // 'close': exited, and its output read to the end (the reason it exited is in it).
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  const httpUrl = `http://127.0.0.1:${httpPort}`;
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  try {
    // Until it answers or has exited: a server that exits is not waited on for 30 s.
    await waitFor(async () => gone() || (await fetch(`${httpUrl}/healthz`).catch(() => null))?.ok, 30_000, 'the standalone server to answer /healthz');
    // /healthz answers while the server still starts (the local model loading); its banner is
    // printed once it has started, and tests read it.
    await waitFor(async () => gone() || log.includes(BANNER), 60_000, 'the standalone server to print its banner');
    if (gone()) {
      await exited;
      const message = `the standalone server exited with ${child.exitCode ?? child.signalCode} before it answered /healthz:\n${log}`;
      throw log.includes('EADDRINUSE') ? new PortTaken(message) : new Error(message);
    }
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  return {
    grpcAddress: `127.0.0.1:${grpcPort}`,
    httpUrl,
    dataDir,
    output: () => log,
    stop,
    dispose: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
