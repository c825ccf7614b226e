// LightRAG for bench:peer: a pinned lightrag-hku from PyPI in a venv under ~/.cache/trellis
// (made once, reused), and the driver process (bench-peer-lightrag.py) that runs it.
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const LIGHTRAG_VERSION = '1.5.7';
// lightrag.llm.openai installs `openai` with pip at first import when it is missing; pinned here instead.
const OPENAI_VERSION = '3.57.0';

const cache = join(homedir(), '.cache/trellis');
const venv = join(cache, 'peers', `lightrag-hku-${LIGHTRAG_VERSION}`);
const python = join(venv, 'bin/python');
const installedMark = join(venv, '.installed');
/** What starts the driver's answers on its stdout (bench-peer-lightrag.py). */
const REPLY = 'BENCH ';

/** The venv's python, installing lightrag-hku into it first when it is not there yet. */
export function ensureLightRag(): string {
  if (existsSync(installedMark)) return python;
  console.log(`installing lightrag-hku ${LIGHTRAG_VERSION} into ${venv} (once; later runs reuse it)`);
  const run = (command: string, args: string[]) => {
    try {
      execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PIP_CACHE_DIR: join(cache, 'pip') }, maxBuffer: 64 * 2 ** 20 });
    } catch (error) {
      const stderr = String((error as { stderr?: Buffer }).stderr ?? '').trim().split('\n').slice(-15).join('\n');
      rmSync(venv, { recursive: true, force: true });
      throw new Error(`bench:peer cannot install LightRAG: \`${command} ${args.join(' ')}\` failed:\n${stderr || (error as Error).message}`);
    }
  };
  run('python3', ['-m', 'venv', venv]);
  run(join(venv, 'bin/pip'), ['install', '--disable-pip-version-check', `lightrag-hku==${LIGHTRAG_VERSION}`, `openai==${OPENAI_VERSION}`]);
  run(python, ['-c', 'import lightrag, lightrag.llm.openai']);
  execFileSync('touch', [installedMark]);
  return python;
}

export interface LightRagOptions {
  python: string;
  baseUrl: string;
  corpusFile: string;
  questionsFile: string;
  workDir: string;
  maxAsync: number;
  parallelInsert: number;
  dimensions: number;
}

/** The driver process: one command in, one JSON line out. */
export class LightRagDriver {
  private readonly lines: AsyncIterator<string>;
  private readonly logFile: string;

  private constructor(private readonly child: ChildProcess, workDir: string) {
    this.logFile = join(workDir, 'driver.log');
    child.stderr!.pipe(createWriteStream(this.logFile));
    this.lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  }

  static async start(o: LightRagOptions): Promise<LightRagDriver> {
    const script = join(__dirname, 'bench-peer-lightrag.py');
    const args = ['--base-url', o.baseUrl, '--corpus', o.corpusFile, '--questions', o.questionsFile, '--work-dir', join(o.workDir, 'rag')];
    args.push('--max-async', String(o.maxAsync), '--parallel-insert', String(o.parallelInsert), '--dimensions', String(o.dimensions));
    // cwd is the scratch directory: LightRAG reads a .env from its working directory.
    const child = spawn(o.python, [script, ...args], { cwd: o.workDir, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } });
    const driver = new LightRagDriver(child, o.workDir);
    await driver.reply();
    return driver;
  }

  get pid(): number {
    return this.child.pid!;
  }

  async send<T>(command: 'ingest' | 'warmup' | 'query'): Promise<T> {
    this.child.stdin!.write(`${command}\n`);
    return this.reply<T>();
  }

  async quit(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end('quit\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }

  /** The next line the driver marked as its own (LightRAG may print to stdout too). */
  private async reply<T>(): Promise<T> {
    let next = await this.lines.next();
    while (!next.done && !next.value.startsWith(REPLY)) next = await this.lines.next();
    if (next.done) {
      await new Promise((r) => (this.child.exitCode === null ? this.child.once('exit', r) : r(undefined)));
      const log = existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8').trim().split('\n').slice(-20).join('\n') : '';
      throw new Error(`the LightRAG driver exited (code ${this.child.exitCode}) before answering; the end of its log (${this.logFile}):\n${log}`);
    }
    const payload = JSON.parse(next.value.slice(REPLY.length)) as T & { error?: string };
    if (payload.error) throw new Error(`the LightRAG driver: ${payload.error}`);
    return payload;
  }
}
