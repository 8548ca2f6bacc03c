/** @module `npm run generate:client`: rewrites `src/generated/openapi.ts` from the current code. */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TYPES_FILE, renderTypes } from './openapi-types.js';

writeFileSync(TYPES_FILE, await renderTypes());
console.log(`Wrote ${fileURLToPath(TYPES_FILE)}`);
