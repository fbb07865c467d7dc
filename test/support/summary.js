// Prints jest's totals as one plain line ("tests: N passed, N failed, N skipped") for CI logs. Given
// several result files it prints their sum: .ci/run closes with the total of all its jest suites, so
// the last line of a CI log says how many tests ran.
const fs = require('node:fs');

const totals = { passed: 0, failed: 0, skipped: 0 };
const missing = [];
for (const file of process.argv.slice(2)) {
  try {
    const r = JSON.parse(fs.readFileSync(file, 'utf8'));
    totals.passed += r.numPassedTests;
    totals.failed += r.numFailedTests;
    totals.skipped += r.numPendingTests;
  } catch (err) {
    missing.push(`${file}: ${err.message}`);
  }
}
if (missing.length > 0) process.stdout.write(`no results from ${missing.join('; ')}\n`);
process.stdout.write(`tests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
