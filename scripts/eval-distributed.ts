// npm run eval:distributed [-- CORPUS_DIR] — `trellis eval` against the distributed deployment:
// the six services on Kafka and the MySQL-family store (scripts/infra-up.sh), reached by their
// own addresses, the corpus ingested through them. CORPUS_DIR holds corpus.jsonl and
// questions.jsonl (default: datasets/nestjs-docs). Same modes, k and table as
// `npm run bench:retrieval:docs`, so the two stores' quality can be read side by side; the
// embeddings are the local model's, as standalone's default.
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { DistributedDeployment } from '@trellis/testing';
import { evalCommand } from '../services/standalone/src/cli/eval-command';
import { loadAverage, machine } from './bench-kit.mjs';

const root = resolve(__dirname, '..');
const corpusDir = resolve(process.argv[2] ?? join(root, 'datasets/nestjs-docs'));

async function main(): Promise<number> {
  const deployment = new DistributedDeployment({
    kafkaBrokers: process.env.KAFKA_BROKERS ?? '127.0.0.1:9092',
    mysqlUrl: process.env.TRELLIS_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:4000/',
    runId: `eval${randomBytes(3).toString('hex')}`,
    // The local embedding model is found in the user's cache, as standalone finds it.
    extraEnv: { HOME: process.env.HOME ?? homedir(), TRELLIS_EMBEDDINGS: 'local' },
  });
  console.log(`${machine()}; corpus ${corpusDir}; load ${loadAverage()}`);
  deployment.prepare();
  await deployment.startAll();
  const client = new TrellisClient({ address: '127.0.0.1:1', addresses: deployment.addresses(), timeoutMs: 120_000 });
  try {
    const options = { modes: ['default', 'vector', 'fulltext', 'graph', 'hybrid'], ks: [2, 5], strategies: [''], timeoutSeconds: 1_800 };
    const status = await evalCommand(client, join(corpusDir, 'corpus.jsonl'), join(corpusDir, 'questions.jsonl'), options, process.stdout);
    console.log(`load ${loadAverage()}`);
    return status;
  } finally {
    client.close();
    await deployment.tearDown();
  }
}

main().then(
  (status) => process.exit(status),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
