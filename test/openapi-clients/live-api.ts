/**
 * The API the generated clients call (test/openapi-clients/run.sh): the test harness (a fresh database
 * copied from the migrated template, Redis under a prefix of its own, the API on a free port of
 * 127.0.0.1) with the usual manifests, a few flags and a currency whose maximum passes 2^32. Prints
 * one line of JSON, `{ base, serverKey, currencyKey }`, and serves until SIGTERM or SIGINT, then drops
 * its database. Takes TEST_DATABASE_URL and TEST_REDIS_URL like the tests.
 */
import globalSetup from '../support/global-setup';
import { startHarness } from '../support/harness';
import { currency, gameConfig, standardManifests } from '../support/manifests';

const ENVIRONMENT = 'alpha-live';
const CURRENCY_KEY = 'gems';

async function main(): Promise<void> {
  await globalSetup();
  const h = await startHarness({
    manifests: [
      ...standardManifests(),
      gameConfig('alpha-live-config', {
        environment: ENVIRONMENT,
        flags: [
          { name: 'new_shop', enabled: true },
          { name: 'winter_event', enabled: false },
        ],
      }),
      currency(CURRENCY_KEY, { environment: ENVIRONMENT, name: 'gems', scope: 'account', kind: 'balance', max: 10_000_000_000 }),
    ],
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    h.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`live-api: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdout.write(`${JSON.stringify({ base: h.base, serverKey: h.serverKeys[`${ENVIRONMENT}-key`], currencyKey: CURRENCY_KEY })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`live-api: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
