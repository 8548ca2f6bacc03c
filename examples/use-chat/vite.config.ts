/** @module The page's build: `web/` (index.html, main.tsx) bundled into `dist/`, served by `src/server.ts`. */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('./web', import.meta.url)),
  // Relative asset URLs: the page works wherever the server mounts it.
  base: './',
  // One copy of each, whichever package imports it (@ai-sdk/react brings its own `ai`).
  resolve: { dedupe: ['ai', 'react', 'react-dom'] },
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    // React, react-dom and the AI SDK in one file: fine for an example page.
    chunkSizeWarningLimit: 1024,
    rollupOptions: {
      // swr's 'use client' marks React Server Components boundaries, which a page bundle has none of.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
