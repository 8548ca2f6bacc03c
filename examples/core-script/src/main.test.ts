/** @module Example (d): the script runs and reports what core did. */
import { expect, it } from 'vitest';
import { main } from './main.js';

it('creates, converses, reads the history and meets core errors', async () => {
  const lines: string[] = [];
  await main((line) => lines.push(line));
  expect(lines).toEqual([
    'Billing helper: user: I was charged twice. | assistant: Which invoice? (more: false)',
    expect.stringMatching(/^refused: Validation failed\. name: /),
    'another workspace sees nothing',
  ]);
});
