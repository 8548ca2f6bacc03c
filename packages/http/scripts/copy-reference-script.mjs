/**
 * @module Build step: copies Scalar's standalone bundle into `dist/assets`, where `GET /docs`
 * serves it from. Copying at build time keeps @scalar/api-reference (a tree of some 700
 * packages, for one 4.9 MB browser file) a development dependency, and the page off CDNs.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// The package exports no path to the bundle: it sits beside the entry point, in dist/browser.
const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
const source = join(dirname(entry), 'browser', 'standalone.js');
const target = new URL('../dist/assets/scalar-api-reference.js', import.meta.url);
mkdirSync(new URL('.', target), { recursive: true });
// The bundle starts with Scalar's banner: package, version and licence (MIT).
copyFileSync(source, target);
