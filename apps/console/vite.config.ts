import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

// Static assets for the gateway's /ui/: hashed file names (served immutable), no runtime fetches
// but the REST API, nothing from a CDN. The domain lib is bundled from its built entry point.
export default defineConfig({
  root,
  base: '/ui/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', assetsInlineLimit: 0, reportCompressedSize: false },
});
