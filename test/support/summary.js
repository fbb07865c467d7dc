// Prints jest's totals as one plain line ("tests: N passed, N failed, N skipped") for CI logs.
const fs = require('node:fs');

const file = process.argv[2];
try {
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  process.stdout.write(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped\n`);
} catch (err) {
  process.stdout.write(`tests: no results (${err.message})\n`);
}
