import { removeTestBundle } from './test-bundle';

/** Removes the run's `hearth` bundle (global-setup.ts built it). */
export default function globalTeardown(): void {
  if (process.env.HEARTH_TEST_BIN) removeTestBundle(process.env.HEARTH_TEST_BIN);
}
