import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '@trellis/testing';

// The images cannot be built here (no Docker engine), so this checks what can be checked
// without one, against the tree `npm run build` leaves: the Dockerfile only copies what the
// build produces and .dockerignore lets through, and the entrypoint starts every service.

const root = join(__dirname, '../..');
const dockerfilePath = join(root, 'deploy/docker/Dockerfile');
const entrypoint = join(root, 'deploy/docker/entrypoint.sh');
const SERVICES = ['ingestion', 'chunking', 'extraction', 'graph-store', 'retrieval', 'chat', 'http-api'] as const;

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

interface Stage {
  readonly name: string;
  readonly from: string;
  readonly instructions: Instruction[];
}

/** Stages and their instructions (continuation lines joined, comments dropped). */
function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (current === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(current + line);
    current = '';
  }
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const upper = keyword.toUpperCase();
    const argText = rest.join(' ');
    if (upper === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(argText);
      stages.push({ name: match?.[2] ?? String(stages.length), from: match?.[1] ?? '', instructions: [] });
    } else if (stages.length === 0 && upper === 'ARG') {
      const [name = '', value = ''] = argText.split('=');
      args.set(name, value);
    } else {
      stages.at(-1)?.instructions.push({ keyword: upper, args: argText });
    }
  }
  return { args, stages };
}

interface Copy {
  readonly stage: string;
  readonly from?: string;
  readonly sources: string[];
  readonly destination: string;
  readonly workdir: string;
}

function copies(stages: readonly Stage[]): Copy[] {
  const out: Copy[] = [];
  for (const stage of stages) {
    let workdir = '/';
    for (const { keyword, args } of stage.instructions) {
      if (keyword === 'WORKDIR') workdir = posix.resolve(workdir, args);
      if (keyword !== 'COPY' && keyword !== 'ADD') continue;
      const words = args.split(/\s+/);
      const flags = words.filter((w) => w.startsWith('--'));
      const paths = words.filter((w) => !w.startsWith('--'));
      const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
      out.push({ stage: stage.name, from, sources: paths.slice(0, -1), destination: paths.at(-1) ?? '', workdir });
    }
  }
  return out;
}

/** Docker's .dockerignore matching: `**` spans directories, a match covers what is below, `!` re-includes. */
function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((line) => {
      const negate = line.startsWith('!');
      const pattern = posix.normalize((negate ? line.slice(1) : line).replace(/^\/+/, ''));
      const regex = pattern
        .split('/')
        .map((part) => (part === '**' ? '.*' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')))
        .join('/')
        .replace(/\.\*\//g, '(?:.*/)?');
      return { negate, regex: new RegExp(`^${regex}$`) };
    });
  return (path: string) => {
    const parts = path.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let ignored = false;
    for (const rule of rules) {
      if (prefixes.some((p) => rule.regex.test(p))) ignored = !rule.negate;
    }
    return ignored;
  };
}

const { args, stages } = parseDockerfile(readFileSync(dockerfilePath, 'utf8'));
const isIgnored = dockerignore(readFileSync(join(root, '.dockerignore'), 'utf8'));
const stageNames = new Set(stages.map((s) => s.name));
/** Stages that hold the build context at their WORKDIR (they COPY from it). */
const contextStages = new Set(copies(stages).filter((c) => c.from === undefined && c.workdir === '/src').map((c) => c.stage));

function workspaces(): string[] {
  return ['libs', 'services'].flatMap((group) =>
    readdirSync(join(root, group), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(root, group, d.name, 'package.json')))
      .map((d) => `${group}/${d.name}`),
  );
}

describe('Dockerfile', () => {
  it('builds a node:20-bookworm-slim runtime, parametrised by SERVICE, as uid 10001, without HEALTHCHECK', () => {
    const runtime = stages.at(-1) as Stage;
    expect(runtime.from.replace('${NODE_IMAGE}', args.get('NODE_IMAGE') ?? '')).toBe('node:20-bookworm-slim');
    expect(runtime.instructions.some((i) => i.keyword === 'ARG' && i.args === 'SERVICE')).toBe(true);
    expect(runtime.instructions.filter((i) => i.keyword === 'USER').map((i) => i.args)).toEqual(['10001:10001']);
    expect(runtime.instructions.find((i) => i.keyword === 'ENTRYPOINT')?.args).toBe('["/app/deploy/docker/entrypoint.sh"]');
    expect(stages.flatMap((s) => s.instructions).some((i) => i.keyword === 'HEALTHCHECK')).toBe(false);
    // Production dependencies only in the runtime: they come from a `npm ci --omit=dev` stage.
    const nodeModules = copies(stages).find((c) => c.stage === runtime.name && c.sources.some((s) => s.endsWith('/node_modules')));
    const deps = stages.find((s) => s.name === nodeModules?.from);
    expect(deps?.instructions.some((i) => i.keyword === 'RUN' && /npm ci --omit=dev/.test(i.args))).toBe(true);
  });

  it('starts every service with the environment `npm start` gives the standalone server (scripts/server-env.mjs)', async () => {
    const { SERVER_ENV } = (await import(join(root, 'scripts/server-env.mjs'))) as { SERVER_ENV: Record<string, string> };
    const runtime = stages.at(-1) as Stage;
    const env = new Map(runtime.instructions.filter((i) => i.keyword === 'ENV').flatMap((i) => i.args.split(/\s+/).map((pair) => pair.split('=') as [string, string])));
    expect(Object.keys(SERVER_ENV).length).toBeGreaterThan(0);
    for (const [name, value] of Object.entries(SERVER_ENV)) expect([name, env.get(name)]).toEqual([name, value]);
  });

  it('copies from the build context only files that exist and that .dockerignore lets through', () => {
    const fromContext = copies(stages).filter((c) => c.from === undefined);
    expect(fromContext.length).toBeGreaterThan(0);
    for (const copy of fromContext) {
      for (const source of copy.sources) {
        if (source === '.') continue;
        expect(existsSync(join(root, source)), source).toBe(true);
        expect(isIgnored(source), `${source} is excluded by .dockerignore`).toBe(false);
      }
    }
  });

  it('copies from earlier stages only what they have: build output of `npm run build`, or their own npm ci', () => {
    for (const copy of copies(stages).filter((c) => c.from !== undefined)) {
      expect(stageNames, `stage ${copy.from}`).toContain(copy.from);
      for (const source of copy.sources) {
        if (contextStages.has(copy.from ?? '') && source.startsWith('/src/')) {
          const path = posix.relative('/src', source);
          if (path === '') continue;
          expect(existsSync(join(root, path)), `${source} (from ${copy.from}) after npm run build`).toBe(true);
        } else {
          // Anything else must be what that stage installed itself.
          expect(posix.basename(source), `${source} from ${copy.from}`).toBe('node_modules');
        }
      }
    }
  });

  it('leaves in the image what the services load at run time: every workspace main, each service main, the CLI, proto/', () => {
    for (const workspace of workspaces()) {
      const pkg = JSON.parse(readFileSync(join(root, workspace, 'package.json'), 'utf8')) as { main?: string };
      // The build stage keeps package.json, dist/ and bin/ of each workspace (test helpers run from src/).
      if (pkg.main?.startsWith('dist/')) expect(existsSync(join(root, workspace, pkg.main)), `${workspace}/${pkg.main}`).toBe(true);
    }
    for (const service of SERVICES) expect(existsSync(join(root, 'services', service, 'dist/main.js')), service).toBe(true);
    expect(existsSync(join(root, 'services/standalone/bin/trellis.js'))).toBe(true);
    expect(existsSync(join(root, 'proto/trellis/v1/chat.proto'))).toBe(true);
    // The web console the HTTP API serves: built by `npm run build`, copied into the runtime stage.
    const runtime = stages.at(-1) as Stage;
    expect(copies(stages).some((c) => c.stage === runtime.name && c.sources.includes('/src/apps/console/dist'))).toBe(true);
    expect(existsSync(join(root, 'apps/console/dist/index.html'))).toBe(true);
  });

  it('.dockerignore keeps the inputs of `npm ci` and `npm run build` and drops local output', () => {
    const needed = [
      'package.json',
      'package-lock.json',
      '.npmrc',
      'tsconfig.base.json',
      'tsconfig.build.json',
      'buf.yaml',
      'buf.gen.yaml',
      'scripts/generate-proto.mjs',
      'proto/trellis/v1/chat.proto',
      'deploy/docker/entrypoint.sh',
      'apps/console/index.html',
      'apps/console/vite.config.mts',
      'apps/console/tsconfig.json',
      'apps/console/src/main.tsx',
      ...workspaces().flatMap((w) => [`${w}/package.json`, `${w}/tsconfig.json`]),
      ...workspaces().filter((w) => existsSync(join(root, w, 'src/index.ts'))).map((w) => `${w}/src/index.ts`),
    ].filter((p) => existsSync(join(root, p)));
    for (const path of needed) expect(isIgnored(path), path).toBe(false);
    for (const path of ['node_modules/x', 'libs/config/node_modules/y', 'libs/config/dist/index.js', '.git/HEAD', 'libs/contracts/src/generated/x.ts', '.trellis/db.sqlite']) {
      expect(isIgnored(path), path).toBe(true);
    }
  });
});

describe('entrypoint', () => {
  const running: ChildProcess[] = [];
  const dataDirs: string[] = [];

  afterEach(() => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('is executable', () => {
    expect(() => accessSync(entrypoint, constants.X_OK)).not.toThrow();
  });

  /** The environment of a container, minus Kafka and TiDB: the service falls back to standalone. */
  function containerEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
    return { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', TRELLIS_LOG_LEVEL: 'warn', ...extra };
  }

  function run(env: NodeJS.ProcessEnv, argv: string[] = []): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
    const child = spawn(entrypoint, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.push(child);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => output, exited };
  }

  async function waitForHealthz(port: number, exited: Promise<number | null>, deadlineMs: number): Promise<string> {
    let gone = false;
    void exited.then(() => (gone = true));
    const deadline = Date.now() + deadlineMs;
    while (Date.now() < deadline && !gone) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1000) });
        if (response.status === 200) return await response.text();
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(gone ? 'the service exited before answering /healthz' : `/healthz did not answer within ${deadlineMs} ms`);
  }

  it.each(SERVICES)(
    'SERVICE=%s starts the service, answers /healthz within 30 s and stops on SIGTERM',
    async (service) => {
      const dataDir = mkdtempSync(join(tmpdir(), `trellis-entrypoint-${service}-`));
      dataDirs.push(dataDir);
      const [grpcPort, httpPort] = [await freePort(), await freePort()];
      const { child, output, exited } = run(
        containerEnv({
          SERVICE: service,
          TRELLIS_MODE: 'standalone',
          TRELLIS_DATA_DIR: dataDir,
          TRELLIS_GRPC_HOST: '127.0.0.1',
          TRELLIS_GRPC_PORT: String(grpcPort),
          TRELLIS_HTTP_HOST: '127.0.0.1',
          TRELLIS_HTTP_PORT: String(httpPort),
        }),
      );
      try {
        expect((await waitForHealthz(httpPort, exited, 30_000)).trim()).toBe('ok');
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${output()}`);
      }
      // `exec` made node the process itself: the signal reaches the graceful shutdown.
      child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000))]);
      expect(code, output()).toBe(0);
    },
    60_000,
  );

  it('SERVICE=cli runs the trellis command with the container arguments, with the commands the chart Jobs run', async () => {
    const help = run(containerEnv({ SERVICE: 'cli' }), ['--help']);
    expect(await help.exited).toBe(0);
    expect(help.output()).toContain('Usage: trellis');
    expect(help.output()).toMatch(/^\s+migrate\b/m);
    const topics = run(containerEnv({ SERVICE: 'cli' }), ['topics', '--help']);
    expect(await topics.exited).toBe(0);
    expect(topics.output()).toMatch(/^\s+ensure\b/m);
  });

  it('refuses an unknown SERVICE', async () => {
    const { output, exited } = run(containerEnv({ SERVICE: 'nonsense' }));
    expect(await exited).toBe(64);
    expect(output()).toContain('SERVICE must be one of');
  });
});
