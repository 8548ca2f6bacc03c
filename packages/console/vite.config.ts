/** @module Vite builds the console (app/) into dist/app: relative URLs, hashed file names, no inline script. */
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'app',
  // Relative URLs: the app works wherever a host mounts it (`/console/`, `/agents-api/console/`).
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../dist/app',
    emptyOutDir: true,
    // No inline modulepreload polyfill: the Content-Security-Policy allows no inline script.
    modulePreload: { polyfill: false },
    // Every asset is a file of its own (no data: URLs, which the CSP refuses).
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
});
