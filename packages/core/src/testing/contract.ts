/** @module The slice of a test runner the contract suites use, so core never imports one at runtime. */

/** The assertions the contract suites make. vitest's and Jest's `expect` results satisfy it. */
export interface ContractAssertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeNull(): void;
  toHaveLength(length: number): void;
  readonly not: ContractAssertion;
}

/**
 * The test API a caller hands to a contract suite, e.g. `{ describe, it, expect }` from vitest.
 * Each test opens its own fixture and cleans it up in a `finally`, so `beforeEach`/`afterEach`
 * are accepted (callers may pass their runner's whole API) but not needed; `it.skip`, when
 * present, reports opted-out tests as skipped instead of leaving them out.
 */
export interface ContractTestApi {
  describe(name: string, body: () => void): void;
  it: {
    (name: string, body: () => Promise<void>): void;
    skip?: (name: string, body: () => Promise<void>) => void;
  };
  expect(actual: unknown, message?: string): ContractAssertion;
  beforeEach?(hook: () => unknown): void;
  afterEach?(hook: () => unknown): void;
}

/** A subject under test and what undoes it (e.g. flushing a Redis key prefix). */
export interface OpenedFixture<T> {
  subject: T;
  cleanup(): Promise<void>;
}

/** Registers one test that runs `body` against a freshly opened subject. */
export type ContractTest<T> = (title: string, body: (subject: T) => Promise<void>) => void;

/**
 * Test registration for a group of a contract suite. A test is skipped when `skip` names its
 * group (`'usage'`) or the test itself (`'usage: <title>'`).
 */
export function contractGroup<T>(
  t: ContractTestApi,
  group: string,
  open: () => Promise<OpenedFixture<T>>,
  skip: readonly string[],
  define: (test: ContractTest<T>) => void,
): void {
  t.describe(group, () => {
    define((title, body) => {
      const run = async () => {
        const { subject, cleanup } = await open();
        try {
          await body(subject);
        } finally {
          await cleanup();
        }
      };
      if (skip.includes(group) || skip.includes(`${group}: ${title}`)) t.it.skip?.(title, run);
      else t.it(title, run);
    });
  });
}
