/**
 * A Project's store publisher key, from the Kubernetes Secret `spec.store.publisherKey.secretRef`
 * names to the store calls of the API, through the operator (docs/commerce.md "Store settings"): the
 * operator reads the Secret of the Project's namespace and stores the key sealed to the API processes'
 * public key, so the API needs no mount of that namespace's Secrets. A Secret or key that is not there
 * is Ready=False (SecretMissing); a rotated Secret is sealed again; the key is never in the operator's
 * log, the Project's status or its Events.
 */
import type { Harness } from '../support/harness';
import type { Kube } from '../support/kube';
import { call, signIn } from '../support/http';
import { NAMESPACE, environment, plan, project, serverKey } from '../support/manifests';
import { StoreStandIn } from '../support/store-standin';
import { type OperatorWorld, startOperatorWorld } from './world';
import { type OperatorProcess, getJson, kubectlApply, projectSecret, readyOf, waitReady, waitUntil } from './operator-process';
import { openProjectSecret, projectSecretKeys } from '../../apps/core/src/tenancy/project-secrets';

jest.setTimeout(120_000);

const FIRST_KEY = 'sealed-publisher-key-1f2e';
const ROTATED_KEY = 'sealed-publisher-key-rotated-9a8b';
const IDENTITY = 'hearth-commerce';
const APP_ID = 480;

let kube: Kube;
let h: Harness;
let operator: OperatorProcess;
let store: StoreStandIn;
let world: OperatorWorld | undefined;

beforeAll(async () => {
  store = await new StoreStandIn([FIRST_KEY, ROTATED_KEY]).start();
  world = await startOperatorWorld();
  ({ kube, h, operator } = world);
}, 150_000);
afterAll(async () => {
  await world?.stop();
  await store?.stop();
});

const stored = async () =>
  (await h.db('projects').where({ namespace: NAMESPACE, name: 'sk-shop' }).first('store_publisher_key'))?.store_publisher_key as string | null | undefined;
const storeSettings = (secretRef: { name: string; key: string }) => ({
  provider: 'steam',
  appId: APP_ID,
  identity: IDENTITY,
  publisherKey: { secretRef },
  baseUrl: store.url,
});
const decode = (text: string) => Buffer.from(text, 'base64').toString('utf8');

/** The store key the API used on its last AuthenticateUserTicket, after a player identified. */
async function keyTheApiSent(playerToken: string): Promise<string> {
  const steamId = '76561197960287930';
  store.setUser(steamId, { country: 'US', currency: 'USD', status: 'Active' });
  const reply = await call(h.base, 'POST', '/commerce/store/identify', {
    token: playerToken,
    body: { ticket: store.issueTicket(steamId, { identity: IDENTITY, appid: APP_ID }), identity: IDENTITY },
  });
  expect(reply.status).toBe(200);
  return store.calls.filter((c) => c.method === 'AuthenticateUserTicket').at(-1)!.params.key;
}

test('the key a Project names is stored sealed, used by the API without any mount, follows the Secret, and a missing one is Ready=False', async () => {
  await kubectlApply(kube, [
    plan('sk-plan'),
    project('sk-shop', { plan: 'sk-plan', store: storeSettings({ name: 'steam-publisher', key: 'publisherKey' }) } as never),
    environment('sk-live', 'sk-shop'),
    serverKey('sk-key', 'sk-live'),
  ]);
  // No Secret yet: refused, naming the Secret and the field, never a key.
  const refused = await waitReady(kube, ['project', 'sk-shop', '-n', NAMESPACE], 'False');
  expect(readyOf(refused)).toMatchObject({
    reason: 'SecretMissing',
    message: expect.stringContaining(`${NAMESPACE}/steam-publisher does not exist (spec.store.publisherKey.secretRef)`),
  });

  // A Secret without the key named: still refused, saying which key.
  await kubectlApply(kube, [projectSecret('steam-publisher', 'sk-shop', { other: 'x' })]);
  await waitUntil('the missing key refused', async () => {
    const obj = await getJson(kube, ['project', 'sk-shop', '-n', NAMESPACE]);
    return readyOf(obj)?.message.includes('has no key "publisherKey"') ? true : undefined;
  });

  const apply = (value: string) => kubectlApply(kube, [projectSecret('steam-publisher', 'sk-shop', { publisherKey: value })]);
  await apply(FIRST_KEY);
  await waitReady(kube, ['project', 'sk-shop', '-n', NAMESPACE], 'True', 30_000);
  const sealed = (await stored())!;
  expect(sealed).toMatch(/^x1\./);
  expect(sealed).not.toContain(FIRST_KEY);
  expect(openProjectSecret(projectSecretKeys(h.masterKey), sealed)).toBe(FIRST_KEY);

  // The API process mounts no Secret (HEARTH_STORE_SECRETS_DIR is not set up): the key it sends is the sealed one.
  await waitReady(kube, ['serverkey', 'sk-key', '-n', NAMESPACE], 'True', 30_000);
  const minted = await getJson(kube, ['secret', 'sk-key-server-key', '-n', NAMESPACE]);
  const player = await signIn(h.base, decode(minted.data.key), `sk-${process.pid}`);
  expect(await keyTheApiSent(player.accessToken)).toBe(FIRST_KEY);

  // A rotated Secret is sealed again at once (the operator watches it), and the API's next call uses it.
  await apply(ROTATED_KEY);
  await waitUntil('the rotated key', async () => {
    const now = await stored();
    return now && openProjectSecret(projectSecretKeys(h.masterKey), now) === ROTATED_KEY ? true : undefined;
  });
  expect(await keyTheApiSent(player.accessToken)).toBe(ROTATED_KEY);

  // Never in the operator's log, the Project's status or its Events.
  const obj = await getJson(kube, ['project', 'sk-shop', '-n', NAMESPACE]);
  const events = await getJson(kube, ['events', '-n', NAMESPACE, '--field-selector', 'involvedObject.name=sk-shop']);
  for (const text of [operator.log(), JSON.stringify(obj.status), JSON.stringify(events)]) {
    expect(text).not.toContain(FIRST_KEY);
    expect(text).not.toContain(ROTATED_KEY);
  }

  // A Project that names the key another way keeps none sealed.
  await kubectlApply(kube, [
    project('sk-shop', { plan: 'sk-plan', store: { ...storeSettings({ name: 'x', key: 'y' }), publisherKey: { env: 'SOME_VARIABLE' } } } as never),
  ]);
  await waitUntil('no stored key', async () => ((await stored()) === null ? true : undefined));
});
