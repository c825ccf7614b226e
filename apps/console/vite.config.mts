import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// The web console: a static single-page app over the REST API, served by the HTTP API
// (standalone and the http-api service) from dist/. `npm run build` builds it; `vite` in this
// folder serves it for development with the API proxied to a running standalone server.
export default defineConfig({
  root: here('.'),
  base: '/',
  plugins: [react()],
  resolve: { alias: { '@trellis/evaluation': here('../../libs/evaluation/src/index.ts') } },
  build: { outDir: here('dist'), emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1200 },
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
