import { startOperator, loadOperatorConfig } from '@hearth/operator';
import { commandLogger, connect } from '../runtime';
import { onShutdown } from '../serving';

/**
 * `hearth operator`: reconciles the hearth.gg custom resources into the database (docs/kubernetes.md,
 * "The operator"). One replica leads (a Lease); the others wait. Probes and metrics on METRICS_PORT.
 */
export async function runOperator(): Promise<void> {
  const config = loadOperatorConfig(process.env);
  const logger = commandLogger('operator', config.base.logLevel).child({ component: 'operator' });
  const { db, coordination, close } = connect(config.base, logger);
  const operator = await startOperator({
    config,
    db,
    coordination,
    logger,
    onLostLease: () => {
      // client-go's way: stop at once and let the pod restart as a candidate; nothing half-done commits.
      logger.error('exiting: the lease is lost');
      process.exit(1);
    },
  });
  onShutdown(logger, async () => {
    await operator.stop();
    await close();
  });
}
