import 'reflect-metadata';
import { runMain } from '@trellis/runtime';
import type { EmbedderInfo } from '@trellis/models';
import { startStandaloneServer } from './standalone-server';

function describeEmbeddings(info: EmbedderInfo): string {
  if (info.fallback !== undefined) return `WARNING hash embeddings (${info.dimensions} dimensions, no semantic search): ${info.fallback}`;
  return `${info.model} (${info.dimensions} dimensions${info.provider === 'local' ? ', in process' : ''})`;
}

/** `npm start`: Trellis standalone, configured from the environment. */
runMain('trellis-standalone', startStandaloneServer, (server, config) =>
  [
    '',
    `Trellis is running: gRPC on ${server.grpcAddress}, health and metrics on http://${config.httpHost}:${server.httpPort}/metrics`,
    ...(server.httpApiPort !== null
      ? [
          `HTTP API: http://${config.httpHost}:${server.httpApiPort}/api/docs (REST), /v1 (OpenAI-compatible), /mcp (MCP)`,
          ...(config.httpApi.console ? [`Web console: http://${config.httpHost}:${server.httpApiPort}/`] : []),
        ]
      : []),
    `Data directory: ${config.dataDir}`,
    `Embeddings: ${describeEmbeddings(server.runtime.models.embedderInfo)}`,
    `Language model: ${config.openai.enabled ? `${config.openai.chatModel} at ${config.openai.baseUrl ?? 'api.openai.com'}` : 'none (local extractor, extractive answers)'}`,
    '',
    'Next, in another terminal:',
    '  npx trellis kb create demo',
    '  npx trellis ingest demo ./examples',
    '  npx trellis status demo',
    '  npx trellis ask demo "Who discovered piezoelectricity?"',
    '',
  ].join('\n'),
);
