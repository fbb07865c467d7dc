/**
 * Figures a test measures (counts of requests sent, timings, memory): appended to
 * .test-results/figures.log in the checkout rather than printed, so that a passing run is quiet.
 * HEARTH_TEST_FIGURES=print prints them as well.
 */
import fs from 'node:fs';
import path from 'node:path';

export const FIGURES_FILE = path.resolve(__dirname, '../../.test-results/figures.log');

export function reportFigure(line: string): void {
  fs.mkdirSync(path.dirname(FIGURES_FILE), { recursive: true });
  fs.appendFileSync(FIGURES_FILE, `${new Date().toISOString()}  ${path.basename(expect.getState().testPath ?? 'unknown')}  ${line}\n`);
  if (process.env.HEARTH_TEST_FIGURES === 'print') process.stdout.write(`${line}\n`);
}
