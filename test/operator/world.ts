/**
 * What the operator suites run against: the project's kube-apiserver with Hearth's CRDs established
 * and the tests' namespace, a harness (a test database and an API process), and the operator between
 * them with the default relist (300 s), so that whatever follows within seconds is the operator's doing.
 */
import { crdsYaml } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { type Kube, startKube } from '../support/kube';
import { NAMESPACE } from '../support/manifests';
import { type OperatorProcess, kubectl, startOperatorProcess } from './operator-process';

export interface OperatorWorld {
  kube: Kube;
  h: Harness;
  operator: OperatorProcess;
  stop(): Promise<void>;
}

export async function startOperatorWorld(): Promise<OperatorWorld> {
  const [kube, h] = await Promise.all([startKube(), startHarness({ manifests: [] })]);
  await kubectl(kube, ['apply', '-f', '-'], crdsYaml());
  await kubectl(kube, ['wait', '--for=condition=Established', 'crd', '-l', 'app.kubernetes.io/part-of=hearth', '--timeout=30s']);
  await kubectl(kube, ['create', 'namespace', NAMESPACE]);
  const operator = await startOperatorProcess({ kube, databaseUrl: h.database.url, redisPrefix: h.redisPrefix });
  return {
    kube,
    h,
    operator,
    stop: async () => {
      await operator.stop();
      await h.close();
      await kube.stop();
    },
  };
}
