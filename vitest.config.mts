import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// Tests import workspace packages from source, not from their build output.
const alias: Record<string, string> = {};
for (const group of ['libs', 'services']) {
  for (const name of readdirSync(resolve(__dirname, group))) {
    const entry = resolve(__dirname, group, name, 'src/index.ts');
    if (existsSync(entry)) alias[`@trellis/${name}`] = entry;
  }
}

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['{libs,services}/*/{src,test}/**/*.spec.ts', 'apps/*/test/**/*.spec.ts', 'deploy/test/**/*.spec.ts', 'tools/**/*.spec.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
