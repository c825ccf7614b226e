// npm run dev:distributed — the six services as separate processes against the local Kafka and
// SQL store (`npm run infra:up` first). Prints where each API listens; Ctrl-C stops them all.
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
console.log(`
Services: ingestion 127.0.0.1:50061 (KnowledgeBaseService), graph-store :50064 (GraphService),
retrieval :50065 (RetrievalService), chat :50066 (ChatService); metrics on :8081-8086/metrics.
Each service serves its own API, so point the CLI at the one you need, e.g.
  npx trellis --server 127.0.0.1:50061 kb create demo
  npx trellis --server 127.0.0.1:50061 ingest demo ./examples
  npx trellis --server 127.0.0.1:50066 ask demo "Who discovered piezoelectricity?"
`);
const stop = () => children.forEach((c) => c.kill('SIGTERM'));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
