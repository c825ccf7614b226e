import 'reflect-metadata';
import { runMain } from '@trellis/platform';
import { startStandaloneServer } from './standalone-server';

/** `npm start`: Trellis standalone, configured from the environment. */
runMain('trellis-standalone', startStandaloneServer, (server, config) =>
  [
    '',
    `Trellis is running: gRPC on ${server.grpcAddress}, health and metrics on http://${config.httpHost}:${server.httpPort}/metrics`,
    `Data directory: ${config.dataDir}${config.openai.enabled ? '' : ' · local models (no LLM configured)'}`,
    '',
    'Next, in another terminal:',
    '  npx trellis kb create demo',
    '  npx trellis ingest demo ./examples',
    '  npx trellis status demo',
    '  npx trellis ask demo "Who discovered piezoelectricity?"',
    '',
  ].join('\n'),
);
