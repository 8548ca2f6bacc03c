/** @module docs/performance.md is what bench/src/performance-doc.ts makes of the committed bench results (never edited by hand). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { currentPerformanceDoc, PERFORMANCE_DOC } from '../bench/src/performance-doc.js';

describe('docs/performance.md', () => {
  it('is generated from bench/RESULTS.md and bench/PEERS.md (run `npm run docs:performance -w @parley/bench` after editing the notes)', () => {
    expect(readFileSync(PERFORMANCE_DOC, 'utf8')).toBe(currentPerformanceDoc());
  });

  it("carries the latest run's figures", () => {
    const results = readFileSync(new URL('../bench/RESULTS.md', import.meta.url), 'utf8');
    const firstTargetRow = results.split('\n').find((line) => line.startsWith('| memory GET agent'))!;
    expect(readFileSync(PERFORMANCE_DOC, 'utf8')).toContain(firstTargetRow);
  });
});
