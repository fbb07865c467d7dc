/**
 * A jest reporter for `make test`: one line per finished test file on stderr, "suite N of M" with the
 * time since the run started, so a long run says where it is (the default reporter stays beside it).
 */
class ProgressReporter {
  onRunStart(results) {
    this.total = results.numTotalTestSuites;
    this.done = 0;
    this.started = Date.now();
  }

  onTestResult(_test, result) {
    this.done += 1;
    const seconds = Math.round((Date.now() - this.started) / 1000);
    const clock = `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
    const file = result.testFilePath.replace(`${process.cwd()}/`, '');
    const verdict = result.numFailingTests > 0 || result.testExecError ? 'FAILED' : 'ok';
    process.stderr.write(`make test: suite ${this.done} of ${this.total} (${clock}): ${file} ${verdict}\n`);
  }
}

module.exports = ProgressReporter;
