/** @module The committed generated types match what the current code's OpenAPI document generates. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TYPES_FILE, parleyDocument, renderTypes } from '../scripts/openapi-types.js';

describe('src/generated/openapi.ts', () => {
  it('is up to date with the OpenAPI document (if not: npm run generate:client)', async () => {
    const committed = readFileSync(TYPES_FILE, 'utf8');
    const current = await renderTypes();
    // A boolean first, so a stale file fails with the fix in the message rather than 3 000 lines of diff.
    expect(
      committed === current,
      'src/generated/openapi.ts is stale: run `npm run generate:client` and commit it',
    ).toBe(true);
  });

  it('changes when the document does (so the check above can fail)', async () => {
    const document = await parleyDocument();
    const changed = structuredClone(document);
    changed.info.title = 'Something else';
    (changed.components!.schemas!.Agent as { required: string[] }).required.pop();
    expect(await renderTypes(changed)).not.toBe(await renderTypes(document));
  });
});
