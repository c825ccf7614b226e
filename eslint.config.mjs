import { createProjectGraphAsync } from '@nx/devkit';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

// @nx/enforce-module-boundaries reads Nx's cached project graph and, when there is none (a fresh
// clone, a plain `npx eslint`), prints a warning and checks nothing. Computing the graph here,
// before any file is linted, makes every ESLint run enforce the boundaries; a graph that cannot
// be computed fails the run instead of silently disabling the rule.
process.env.NX_DAEMON ??= 'false';
await createProjectGraphAsync({ exitOnError: false });

/**
 * Package layering, per Nx project: libs depend only on libs; a service never imports another
 * service; only the composition root (standalone) wires services together; test helpers stay in
 * tests.
 */
export const projectBoundaries = {
  files: ['**/*.ts', '**/*.tsx'],
  plugins: { '@nx': nx },
  rules: {
    '@nx/enforce-module-boundaries': [
      'error',
      {
        allow: [],
        // The CLI loads server code (the embedded server, the MCP server, the admin commands'
        // drivers) only when a command needs it, so that client commands start fast; the
        // composition root imports the same libraries statically.
        checkDynamicDependenciesExceptions: ['@trellis/runtime', '@trellis/http-api', '@trellis/messaging', '@trellis/observability', '@trellis/storage', '@trellis/ingestion'],
        depConstraints: [
          { sourceTag: 'scope:lib', onlyDependOnLibsWithTags: ['scope:lib'] },
          { sourceTag: 'scope:service', onlyDependOnLibsWithTags: ['scope:lib', 'scope:testing'] },
          { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:lib', 'scope:service', 'scope:testing'] },
          { sourceTag: 'scope:testing', onlyDependOnLibsWithTags: ['scope:lib'] },
        ],
      },
    ],
  },
};

// ---------------------------------------------------------------------------------------------
// File boundaries. A service project holds both its domain classes and their NestJS edge, so
// project tags cannot tell them apart: these rules classify files by path instead.
//
//   domain   services/<name>/src/**, except the adapters below: plain classes that hold the
//            rules (chunking.service.ts, text-splitter.ts, entity-resolver.ts, graph-retriever.ts,
//            chat-engine.ts, ...). No framework, no driver, no SDK, no gRPC, no test helper.
//   adapter  services/<name>/src/handlers/** (gRPC controllers, event consumers),
//            services/<name>/src/adapters/**, **/*.module.ts, main.ts, grpc-*.ts (gRPC client
//            adapters), and all of services/standalone/src (composition root and CLI). May use
//            Nest, gRPC and the runtime; still no driver and no test helper.
//   library  libs/<name>/src/**: each driver is imported by its own adapter folder only, Nest by
//            libs/runtime and libs/grpc-edge only; the gRPC wire (grpc-edge, libs/wire, and the
//            client that uses libs/wire alone) stays free of the process (runtime, storage,
//            messaging, models); libs/vectors (the exact vector index) imports no Trellis library,
//            libs/text-search (terms and BM25) none but libs/vectors.
//   tests    *.spec.ts, test/**, libs/testing: anything.
// ---------------------------------------------------------------------------------------------

/** A restricted module and everything under it (`mysql2` and `mysql2/promise`). */
function banned(name, message) {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace('\\*', '[^/]+');
  return { regex: `^${escaped}(/.*)?$`, message };
}

/** Each driver or SDK and the one folder that may import it: its adapter. */
const DRIVERS = [
  { name: 'kafkajs', home: 'libs/messaging/src/kafka', use: 'the EventBus port of @trellis/messaging' },
  { name: 'typeorm', home: 'libs/storage/src/mysql', use: 'the repositories of @trellis/storage' },
  { name: 'mysql2', home: 'libs/storage/src/mysql', use: 'the repositories of @trellis/storage' },
  { name: 'better-sqlite3', home: 'libs/storage/src/sqlite', use: 'the repositories of @trellis/storage' },
  { name: 'onnxruntime-node', home: 'libs/models/src/local-embedding', use: 'the EmbeddingProvider of @trellis/models' },
  { name: 'openai', home: 'libs/models/src', use: 'the providers of @trellis/models' },
];

/** The driver bans for a file in `folder`: every driver whose home does not contain it. */
function driversOutside(folder = '') {
  return DRIVERS.filter((d) => !(folder === d.home || folder.startsWith(`${d.home}/`))).map((d) =>
    banned(d.name, `${d.name} is a driver: only its adapter (${d.home}) imports it. Depend on ${d.use}.`),
  );
}

const NEST_IN_DOMAIN = banned(
  '@nestjs/*',
  'Domain code imports no framework: keep this class plain (its dependencies passed in) and put the Nest part in handlers/, the *.module.ts or main.ts.',
);
const GRPC_IN_DOMAIN = banned('@grpc/*', 'Domain code knows no transport: gRPC belongs in handlers/ (server side) or a grpc-*.ts adapter (client side).');
const EDGE_IN_DOMAIN = ['@trellis/runtime', '@trellis/grpc-edge', '@trellis/client'].map((name) =>
  banned(name, `Domain code reaches the process, the wire and other services through ports passed in; ${name} is for adapters (handlers/, *.module.ts, main.ts, grpc-*.ts).`),
);
const NEST_IN_LIB = banned('@nestjs/*', 'Nest belongs to the runtime and the gRPC edge (libs/runtime, libs/grpc-edge) and the services\' adapters; this library stays framework-free.');
const GRPC_IN_LIB = banned('@grpc/*', 'gRPC belongs to libs/grpc-edge, libs/wire and libs/client.');
const EDGE_IN_CLIENT = banned('@trellis/grpc-edge', "The client takes its half of the wire from @trellis/wire: grpc-edge loads Nest and the server's telemetry, half a second of every CLI start.");
const PROCESS_IN_WIRE = ['@trellis/runtime', '@trellis/storage', '@trellis/messaging', '@trellis/models'].map((name) =>
  banned(name, `The gRPC wire (grpc-edge, client) is loaded by every gRPC client: it stays free of the process, so it cannot import ${name}.`),
);
const TRELLIS_IN_VECTORS = banned(
  '@trellis/*',
  'The vector index is plain computation that storage builds on: it imports no other Trellis library (and so can never reach back into storage).',
);
const TRELLIS_IN_TEXT_SEARCH = {
  regex: '^@trellis/(?!vectors$).*',
  message: 'Text analysis and BM25 are plain computation that storage and the services build on: they import no Trellis library but @trellis/vectors (its top-k heap).',
};
const TESTING = ['@trellis/testing', 'vitest'].map((name) => banned(name, `${name} is for tests (*.spec.ts, test/): production code does not ship test helpers.`));

const TESTS = ['**/*.spec.ts', '**/test/**'];
const SERVICE_ADAPTERS = [
  'services/*/src/handlers/**/*.ts',
  'services/*/src/adapters/**/*.ts',
  'services/*/src/**/*.module.ts',
  'services/*/src/main.ts',
  'services/*/src/**/grpc-*.ts',
  'services/standalone/src/**/*.ts',
];

/** One block per zone; a later block replaces an earlier one's bans for the files both match. */
function zone(files, patterns, ignores = []) {
  return { files, ignores: [...TESTS, ...ignores], rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

export const fileBoundaries = [
  zone(['services/*/src/**/*.ts'], [NEST_IN_DOMAIN, GRPC_IN_DOMAIN, ...EDGE_IN_DOMAIN, ...driversOutside(), ...TESTING], SERVICE_ADAPTERS),
  zone(SERVICE_ADAPTERS, [...driversOutside(), ...TESTING]),
  zone(['libs/*/src/**/*.ts'], [NEST_IN_LIB, GRPC_IN_LIB, ...driversOutside(), ...TESTING], ['libs/testing/**']),
  zone(['libs/runtime/src/**/*.ts'], [...driversOutside(), ...TESTING]),
  zone(['libs/grpc-edge/src/**/*.ts'], [...PROCESS_IN_WIRE, ...driversOutside(), ...TESTING]),
  zone(['libs/client/src/**/*.ts'], [NEST_IN_LIB, EDGE_IN_CLIENT, ...PROCESS_IN_WIRE, ...driversOutside(), ...TESTING]),
  zone(['libs/wire/src/**/*.ts'], [NEST_IN_LIB, ...PROCESS_IN_WIRE, banned('@trellis/*', 'The wire is what every gRPC client loads: it imports no other Trellis library.'), ...driversOutside(), ...TESTING]),
  zone(['libs/vectors/src/**/*.ts'], [NEST_IN_LIB, GRPC_IN_LIB, TRELLIS_IN_VECTORS, ...driversOutside(), ...TESTING]),
  zone(['libs/text-search/src/**/*.ts'], [NEST_IN_LIB, GRPC_IN_LIB, TRELLIS_IN_TEXT_SEARCH, ...driversOutside(), ...TESTING]),
  // Driver homes come after the library block; `libs/models/src` (openai) before its
  // `local-embedding` folder (openai and onnxruntime-node).
  ...[...new Set(DRIVERS.map((d) => d.home))]
    .sort((a, b) => a.length - b.length)
    .map((home) => zone([`${home}/**/*.ts`], [NEST_IN_LIB, GRPC_IN_LIB, ...driversOutside(home), ...TESTING])),
];

const TYPED_RULES = {
  '@typescript-eslint/no-floating-promises': 'error',
  '@typescript-eslint/no-explicit-any': 'error',
  '@typescript-eslint/switch-exhaustiveness-check': 'error',
  '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
};

/** The console runs in the browser and talks to Trellis only over the REST API: no Node built-ins, no workspace package but the framework-free evaluation lib. */
const CONSOLE_IMPORTS = {
  files: ['apps/console/src/**/*.ts', 'apps/console/src/**/*.tsx'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          { regex: '^node:', message: 'The console runs in the browser: no Node built-ins.' },
          { regex: '^@trellis/(?!evaluation$)', message: 'The console talks to Trellis over the REST API only; of the workspace it imports only @trellis/evaluation (framework-free).' },
        ],
      },
    ],
  },
};

export default [
  { ignores: ['**/dist/**', '**/node_modules/**', 'libs/contracts/src/generated/**', 'coverage/**', '**/*.mjs', '**/*.js'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    ignores: ['apps/console/src/**'],
    languageOptions: { parserOptions: { project: ['./tsconfig.lint.json'], tsconfigRootDir: import.meta.dirname } },
    rules: TYPED_RULES,
  },
  // The web console: a browser app with its own tsconfig (DOM, JSX), type-checked the same way.
  {
    files: ['apps/console/src/**/*.ts', 'apps/console/src/**/*.tsx'],
    languageOptions: { parserOptions: { project: ['./apps/console/tsconfig.json'], tsconfigRootDir: import.meta.dirname } },
    rules: TYPED_RULES,
  },
  projectBoundaries,
  ...fileBoundaries,
  CONSOLE_IMPORTS,
];
