// npm run dev:distributed — the six services as separate processes against the local Kafka and
// SQL store (`npm run infra:up` first), and the http-api service in front of them. Prints where
// each API listens; Ctrl-C stops them all.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = {
  ...process.env,
  TRELLIS_MODE: 'distributed',
  KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? '127.0.0.1:9092',
  TRELLIS_DB_URL: process.env.TRELLIS_DB_URL ?? 'mysql://root@127.0.0.1:4000/trellis_dev',
  // A fresh secret per run unless one is given: a well-known default would let anyone act as any tenant.
  TRELLIS_INTERNAL_TOKEN: process.env.TRELLIS_INTERNAL_TOKEN ?? randomBytes(32).toString('hex'),
};
const services = [
  ['ingestion', 50061, 8081],
  ['chunking', 50062, 8082],
  ['extraction', 50063, 8083],
  ['graph-store', 50064, 8084],
  ['retrieval', 50065, 8085],
  ['chat', 50066, 8086],
];

const cli = join(root, 'services/standalone/bin/trellis.js');
execFileSync(process.execPath, [cli, 'migrate'], { env, stdio: 'inherit' });
execFileSync(process.execPath, [cli, 'topics', 'ensure'], { env, stdio: 'inherit' });

const children = services.map(([name, grpcPort, httpPort]) => {
  const child = spawn(process.execPath, [join(root, `services/${name}/dist/main.js`)], {
    cwd: root,
    env: { ...env, TRELLIS_GRPC_PORT: String(grpcPort), TRELLIS_HTTP_PORT: String(httpPort), TRELLIS_RETRIEVAL_ADDRESS: '127.0.0.1:50065' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.on('exit', (code, signal) => console.log(`${name} exited (${signal ?? code})`));
  return child;
});
// The HTTP API on :8080, each gRPC API at the service that serves it (as the Helm chart wires them).
const httpApi = spawn(process.execPath, [join(root, 'services/http-api/dist/main.js')], {
  cwd: root,
  env: {
    ...env,
    TRELLIS_HTTP_PORT: '8087',
    TRELLIS_HTTP_API_PORT: '8080',
    TRELLIS_HTTP_API_KNOWLEDGE_BASE_ADDRESS: '127.0.0.1:50061',
    TRELLIS_HTTP_API_GRAPH_ADDRESS: '127.0.0.1:50064',
    TRELLIS_HTTP_API_RETRIEVAL_ADDRESS: '127.0.0.1:50065',
    TRELLIS_HTTP_API_CHAT_ADDRESS: '127.0.0.1:50066',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
httpApi.on('exit', (code, signal) => console.log(`http-api exited (${signal ?? code})`));
children.push(httpApi);
console.log(`
Services: ingestion 127.0.0.1:50061 (KnowledgeBaseService), graph-store :50064 (GraphService),
retrieval :50065 (RetrievalService), chat :50066 (ChatService); metrics on :8081-8086/metrics.
Each service serves its own API, so point the CLI at the one you need, e.g.
  npx trellis --server 127.0.0.1:50061 kb create demo
  npx trellis --server 127.0.0.1:50061 ingest demo ./examples
  npx trellis --server 127.0.0.1:50066 ask demo "Who discovered piezoelectricity?"
The HTTP API (REST, OpenAI-compatible, MCP) calls all of them: http://127.0.0.1:8080/api/docs
(its metrics on :8087/metrics).
`);
const stop = () => children.forEach((c) => c.kill('SIGTERM'));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
