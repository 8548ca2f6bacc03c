/**
 * @module CI check over vitest's JSON report: every test ran and passed. The Redis tests skip
 * themselves (loudly) when Redis is missing outside CI; in CI a skipped test is a failure, so a
 * missing service can never turn the pipeline green. Usage: node .ci/no-skipped-tests.mjs <report.json>
 */
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const notPassed = report.testResults.flatMap((file) =>
  file.assertionResults
    .filter((test) => test.status !== 'passed')
    .map((test) => `  ${test.status}: ${file.name.replace(`${process.cwd()}/`, '')} > ${test.fullName}`),
);
if (report.numTotalTests === 0 || notPassed.length > 0) {
  console.error(
    `CI: ${notPassed.length} of ${report.numTotalTests} tests did not pass (skipped tests count as failures here):`,
  );
  console.error(notPassed.join('\n'));
  console.log(`${report.numPassedTests} passed, ${report.numTotalTests - report.numPassedTests} failed`);
  process.exit(1);
}
console.log(`CI: all ${report.numTotalTests} tests ran and passed; none skipped.`);
// The plain closing line CI reads to know tests ran.
console.log(`${report.numTotalTests} passed, 0 failed`);
