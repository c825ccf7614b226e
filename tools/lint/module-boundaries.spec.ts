import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import type { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The boundary rules of eslint.config.mjs, run on one import line placed in real files of the
 * tree: a glob that stops matching, a ban that is dropped or a skipped Nx graph fails here, not
 * silently in review.
 */
const root = resolve(__dirname, '../..');
let eslint: ESLint;

beforeAll(async () => {
  const config = (await import(pathToFileURL(join(root, 'eslint.config.mjs')).href)) as { projectBoundaries: Linter.Config; fileBoundaries: Linter.Config[] };
  eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    // Only the boundary rules: they need no type information, so no TypeScript program is built.
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser } }, config.projectBoundaries, ...config.fileBoundaries],
  });
});

/** What the linter says about `import { x } from '<module>'` at the top of `file`. */
async function problems(file: string, module: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import { x } from '${module}';\nexport const y = x;\n`, { filePath: join(root, file) });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

const DOMAIN_FILES = [
  'services/chunking/src/chunking.service.ts',
  'services/chunking/src/text-splitter.ts',
  'services/graph-store/src/entity-resolver.ts',
  'services/retrieval/src/graph-retriever.ts',
  'services/chat/src/chat-engine.ts',
  'services/ingestion/src/parsing/document-parser.ts',
];
const ADAPTER_FILES = [
  'services/chunking/src/handlers/document-events.consumer.ts',
  'services/chunking/src/chunking.module.ts',
  'services/chunking/src/main.ts',
  'services/chat/src/grpc-retrieval-port.ts',
  'services/standalone/src/standalone-server.ts',
];

describe('domain files', () => {
  const banned = ['@nestjs/common', '@nestjs/microservices', '@grpc/grpc-js', 'kafkajs', 'typeorm', 'mysql2/promise', 'better-sqlite3', 'onnxruntime-node', 'openai', '@trellis/runtime', '@trellis/grpc-edge', '@trellis/client', '@trellis/testing'];

  it.each(DOMAIN_FILES)('%s imports no framework, driver, edge or test helper', async (file) => {
    for (const module of banned) {
      const found = await problems(file, module);
      expect(found, module).toHaveLength(1);
      expect(found[0], module).toMatch(/^no-restricted-imports: /);
    }
  });

  it('says why and where the framework goes instead', async () => {
    const [nest] = await problems('services/chunking/src/chunking.service.ts', '@nestjs/common');
    expect(nest).toContain('Domain code imports no framework');
    expect(nest).toContain('handlers/');
    const [testing] = await problems('services/retrieval/src/retrieval.service.ts', '@trellis/testing');
    expect(testing).toContain('@trellis/testing is for tests');
  });

  it.each(DOMAIN_FILES)('%s may use the libraries\' ports', async (file) => {
    for (const module of ['@trellis/contracts', '@trellis/storage', '@trellis/models', '@trellis/messaging', '@trellis/observability']) {
      expect(await problems(file, module), module).toEqual([]);
    }
  });
});

describe('adapter files', () => {
  it.each(ADAPTER_FILES)('%s may use Nest, gRPC and the runtime', async (file) => {
    for (const module of ['@nestjs/common', '@grpc/grpc-js', '@trellis/runtime', '@trellis/grpc-edge']) {
      expect(await problems(file, module), module).toEqual([]);
    }
  });

  it.each(ADAPTER_FILES)('%s imports no driver and no test helper', async (file) => {
    for (const module of ['kafkajs', 'better-sqlite3', 'typeorm', '@trellis/testing']) {
      expect(await problems(file, module), module).toHaveLength(1);
    }
  });
});

describe('tests', () => {
  it.each(['services/chunking/src/chunking.service.spec.ts', 'services/graph-store/test/graph-writer.store.spec.ts', 'services/standalone/test/standalone.e2e.spec.ts'])(
    '%s may import test helpers and drivers',
    async (file) => {
      for (const module of ['@trellis/testing', 'vitest', 'mysql2/promise', '@nestjs/testing']) {
        expect(await problems(file, module), module).toEqual([]);
      }
    },
  );

  it('libraries\' tests may open the drivers', async () => {
    expect(await problems('libs/storage/test/mysql-store.spec.ts', 'mysql2/promise')).toEqual([]);
  });
});

describe('libraries', () => {
  it('import each driver only in its adapter folder', async () => {
    const homes: Array<[string, string]> = [
      ['libs/messaging/src/kafka/kafka-event-bus.ts', 'kafkajs'],
      ['libs/storage/src/mysql/mysql-store.ts', 'typeorm'],
      ['libs/storage/src/mysql/mysql-store.ts', 'mysql2'],
      ['libs/storage/src/sqlite/sqlite-store.ts', 'better-sqlite3'],
      ['libs/models/src/local-embedding/sentence-encoder.ts', 'onnxruntime-node'],
      ['libs/models/src/openai-models.ts', 'openai'],
    ];
    for (const [file, module] of homes) expect(await problems(file, module), `${module} in ${file}`).toEqual([]);
    const strays: Array<[string, string]> = [
      ['libs/storage/src/index.ts', 'better-sqlite3'],
      ['libs/storage/src/sqlite/sqlite-store.ts', 'typeorm'],
      ['libs/storage/src/mysql/mysql-store.ts', 'better-sqlite3'],
      ['libs/messaging/src/index.ts', 'kafkajs'],
      ['libs/models/src/openai-models.ts', 'onnxruntime-node'],
      ['libs/runtime/src/runtime.ts', 'kafkajs'],
      ['libs/storage/src/index.ts', '@nestjs/common'],
      ['libs/graph/src/graph-editor.ts', 'better-sqlite3'],
      ['libs/graph/src/graph-editor.ts', '@nestjs/common'],
    ];
    for (const [file, module] of strays) {
      const [found] = await problems(file, module);
      expect(found, `${module} in ${file}`).toMatch(/^no-restricted-imports: /);
    }
    expect((await problems('libs/storage/src/index.ts', 'kafkajs'))[0]).toContain('only its adapter (libs/messaging/src/kafka) imports it');
  });

  it('keep the gRPC wire free of the process, which may use Nest', async () => {
    for (const file of ['libs/grpc-edge/src/grpc-server.ts', 'libs/client/src/trellis-client.ts', 'libs/wire/src/grpc-wire.ts']) {
      for (const module of ['@trellis/runtime', '@trellis/storage', '@trellis/messaging', '@trellis/models']) {
        // grpc-edge importing the runtime is also a cycle, which the Nx rule reports beside it.
        expect(await problems(file, module), `${module} in ${file}`).toContainEqual(expect.stringMatching(/^no-restricted-imports: .*the gRPC wire/i));
      }
    }
    // The client takes its half of the wire from libs/wire, which imports no Trellis library: a CLI start loads neither Nest nor the server's telemetry.
    expect(await problems('libs/client/src/trellis-client.ts', '@trellis/grpc-edge')).toEqual([expect.stringMatching(/^no-restricted-imports: .*@trellis\/wire/)]);
    expect(await problems('libs/client/src/trellis-client.ts', '@trellis/wire')).toEqual([]);
    expect(await problems('libs/wire/src/grpc-wire.ts', '@trellis/observability')).toEqual([expect.stringMatching(/^no-restricted-imports: .*imports no other Trellis library/)]);
    expect(await problems('libs/wire/src/grpc-wire.ts', '@grpc/grpc-js')).toEqual([]);
    expect(await problems('libs/runtime/src/trellis-process.ts', '@nestjs/core')).toEqual([]);
    expect(await problems('libs/runtime/src/trellis-process.ts', '@trellis/grpc-edge')).toEqual([]);
  });

  it('keep the vector index a leaf: storage builds on it, it imports no Trellis library', async () => {
    for (const module of ['@trellis/storage', '@trellis/contracts', '@trellis/graph']) {
      expect(await problems('libs/vectors/src/vector-index.ts', module), module).toContainEqual(expect.stringMatching(/^no-restricted-imports: .*imports no other Trellis library/));
    }
    for (const module of ['@nestjs/common', 'better-sqlite3', 'vitest']) {
      expect(await problems('libs/vectors/src/vector-kernel.ts', module), module).toEqual([expect.stringMatching(/^no-restricted-imports: /)]);
    }
    expect(await problems('libs/storage/src/sql/vector-ranking.ts', '@trellis/vectors')).toEqual([]);
  });

  it('keep text search below storage: it imports no Trellis library but the vector index', async () => {
    for (const module of ['@trellis/storage', '@trellis/contracts', '@trellis/models']) {
      expect(await problems('libs/text-search/src/text-postings.ts', module), module).toContainEqual(expect.stringMatching(/^no-restricted-imports: .*no Trellis library but @trellis\/vectors/));
    }
    expect(await problems('libs/text-search/src/text-postings.ts', '@trellis/vectors')).toEqual([]);
    expect(await problems('libs/text-search/src/porter-terms.ts', 'better-sqlite3')).toEqual([expect.stringMatching(/^no-restricted-imports: /)]);
    expect(await problems('libs/storage/src/sqlite/in-memory-text-index.ts', '@trellis/text-search')).toEqual([]);
  });
});

describe('projects (Nx tags)', () => {
  it('keep services apart; only the composition root wires them together', async () => {
    const [found] = await problems('services/chat/src/chat-engine.ts', '@trellis/retrieval');
    expect(found).toMatch(/^@nx\/enforce-module-boundaries: A project tagged with "scope:service" can only depend on libs tagged with/);
    expect(await problems('services/standalone/src/standalone-server.ts', '@trellis/chat')).toEqual([]);
  });

  it('keep libraries off services', async () => {
    const [found] = await problems('libs/runtime/src/runtime.ts', '@trellis/chunking');
    expect(found).toMatch(/^@nx\/enforce-module-boundaries: /);
    const [graphStore] = await problems('libs/graph/src/graph-editor.ts', '@trellis/graph-store');
    expect(graphStore).toMatch(/^@nx\/enforce-module-boundaries: /);
  });

  it('keep the graph rules off storage: storage applies them, they never reach back', async () => {
    const [found] = await problems('libs/graph/src/graph-editor.ts', '@trellis/storage');
    expect(found).toMatch(/^@nx\/enforce-module-boundaries: Circular dependency/);
    expect(await problems('libs/storage/src/sql/graph-edit-session.ts', '@trellis/graph')).toEqual([]);
  });
});
