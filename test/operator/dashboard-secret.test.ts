/**
 * A Project's custom-dashboard client secret, from the Kubernetes Secret it names to the API,
 * through the operator (docs/dashboards.md "The client secret"): the operator reads the Secret and
 * stores its value sealed to the API processes' public key, never in the clear; the API opens it.
 * A Secret or key that is not there is Ready=False (SecretMissing), and fixed by creating it with the
 * label that opts it in for the Project (hearth.gg/secret-for).
 */
import type { Harness } from '../support/harness';
import type { Kube } from '../support/kube';
import { NAMESPACE, plan, project } from '../support/manifests';
import { dashboardSettings } from '../support/dashboards';
import { type OperatorWorld, startOperatorWorld } from './world';
import { type OperatorProcess, kubectlApply, projectSecret, readyOf, waitReady, waitUntil } from './operator-process';
import { openProjectSecret, projectSecretKeys } from '../../apps/core/src/tenancy/project-secrets';

jest.setTimeout(90_000);

let kube: Kube;
let h: Harness;
let operator: OperatorProcess;

let world: OperatorWorld | undefined;
beforeAll(async () => {
  // The harness's API process publishes the key the operator seals to.
  world = await startOperatorWorld();
  ({ kube, h, operator } = world);
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

const stored = async (name: string) =>
  (await h.db('projects').where({ namespace: NAMESPACE, name }).first('dashboard_client_secret'))?.dashboard_client_secret as string | null | undefined;

test('the client secret a Project names is stored sealed to the API, follows the Secret, and a missing one is Ready=False', async () => {
  const secretValue = 'operator-carried-secret-value';
  await kubectlApply(kube, [plan('ds-plan'), project('ds-project', { plan: 'ds-plan', dashboard: dashboardSettings('https://idp.example') })]);
  // No Secret yet: refused, with the Secret named.
  const refused = await waitReady(kube, ['project', 'ds-project', '-n', NAMESPACE], 'False');
  expect(readyOf(refused)).toMatchObject({ reason: 'SecretMissing', message: expect.stringContaining(`${NAMESPACE}/dashboard-oidc`) });

  await kubectlApply(kube, [projectSecret('dashboard-oidc', 'ds-project', { 'client-secret': secretValue })]);
  await waitReady(kube, ['project', 'ds-project', '-n', NAMESPACE], 'True', 30_000);
  const sealed = (await stored('ds-project'))!;
  expect(sealed).toMatch(/^x1\./);
  expect(sealed).not.toContain(secretValue);
  expect(openProjectSecret(projectSecretKeys(h.masterKey), sealed)).toBe(secretValue);
  expect(operator.log()).not.toContain(secretValue);

  // A rotated Secret reaches the database at once: the operator watches the Secrets opted in for a Project.
  await kubectlApply(kube, [projectSecret('dashboard-oidc', 'ds-project', { 'client-secret': 'rotated-value' })]);
  await waitUntil('the rotated secret', async () => {
    const now = await stored('ds-project');
    return now && openProjectSecret(projectSecretKeys(h.masterKey), now) === 'rotated-value' ? true : undefined;
  });

  // A Project that names no secret any more keeps none.
  const { clientSecretRef: _named, ...publicClient } = dashboardSettings('https://idp.example');
  await kubectlApply(kube, [project('ds-project', { plan: 'ds-plan', dashboard: publicClient })]);
  await waitUntil('no stored secret', async () => ((await stored('ds-project')) === null ? true : undefined));
});
