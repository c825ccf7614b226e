import { userInfo } from 'node:os';
import { loadConfig } from '@trellis/config';
import { TrellisClient } from '@trellis/client';
import type { RunningProcess } from '@trellis/runtime';

export interface ConnectionOptions {
  server?: string;
  embedded?: boolean;
  dataDir?: string;
  apiKey?: string;
  actor?: string;
}

/** A client, and with --embedded the in-process server it talks to. */
export interface Connection {
  readonly client: TrellisClient;
  close(): Promise<void>;
}

/**
 * Connects to a running server, or with `--embedded` starts one inside the CLI process on a
 * free loopback port, so every command has one code path: the gRPC API.
 */
export async function connect(options: ConnectionOptions): Promise<Connection> {
  if (!options.embedded) {
    const client = new TrellisClient({
      address: options.server ?? process.env.TRELLIS_SERVER ?? '127.0.0.1:50051',
      apiKey: options.apiKey ?? process.env.TRELLIS_API_KEY,
      actor: actorOf(options),
    });
    return { client, close: async () => client.close() };
  }
  // The server's code is loaded only for --embedded: a client command starts in a fraction of the time.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { startStandaloneServer } = require('../standalone-server') as typeof import('../standalone-server');
  const { freePort } = require('@trellis/runtime') as typeof import('@trellis/runtime');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const grpcPort = await freePort();
  const env: Record<string, string | undefined> = { ...process.env, TRELLIS_GRPC_HOST: '127.0.0.1', TRELLIS_GRPC_PORT: String(grpcPort), TRELLIS_HTTP_PORT: '0', TRELLIS_LOG_LEVEL: process.env.TRELLIS_LOG_LEVEL ?? 'warn' };
  if (options.dataDir) env.TRELLIS_DATA_DIR = options.dataDir;
  delete env.TRELLIS_API_KEYS;
  // The CLI is this server's only caller: shedding its calls while the server indexes for it helps nobody.
  env.TRELLIS_MAX_CONCURRENT_REQUESTS ??= '0';
  const server: RunningProcess = await startStandaloneServer(loadConfig(env, 'trellis-cli'));
  const client = new TrellisClient({ address: server.grpcAddress!, actor: actorOf(options) });
  return {
    client,
    close: async () => {
      client.close();
      await server.close();
    },
  };
}

/** Who graph edits are logged as: --actor, else TRELLIS_ACTOR, else the login name. */
function actorOf(options: ConnectionOptions): string | undefined {
  return options.actor ?? process.env.TRELLIS_ACTOR ?? process.env.USER ?? loginName();
}

/** The OS account running the CLI; containers often leave USER unset. */
function loginName(): string | undefined {
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}
