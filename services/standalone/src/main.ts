import 'reflect-metadata';
import { ConfigError, loadConfig } from '@trellis/config';
import { startStandaloneServer } from './standalone-server';

/** `npm start`: Trellis standalone, configured from the environment. */
async function main(): Promise<void> {
  const config = loadConfig(process.env, 'trellis-standalone');
  const server = await startStandaloneServer(config);
  const cli = 'npx trellis';
  process.stdout.write(
    [
      '',
      `Trellis is running: gRPC on ${server.grpcAddress}, health and metrics on http://${config.grpcHost}:${server.httpPort}/metrics`,
      `Data directory: ${config.dataDir}${config.openai.enabled ? '' : ' · local models (no LLM configured)'}`,
      '',
      'Next, in another terminal:',
      `  ${cli} kb create demo`,
      `  ${cli} ingest demo ./examples`,
      `  ${cli} status demo`,
      `  ${cli} ask demo "Who founded the Radium Institute?"`,
      '',
    ].join('\n'),
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.runtime.logger.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        server.runtime.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `Trellis failed to start: ${(error as Error).stack ?? String(error)}`}\n`);
  process.exit(1);
});
