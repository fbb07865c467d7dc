/**
 * `hearth licence-keys create|list|revoke`: an organisation's (a project's) licence keys, as
 * `hearth keys` does for server keys (docs/licence.md). The whole key is printed once, when made, with
 * the products it covers (`--product`, at least one) and the audience its organisation's plugins check.
 * `hearth licence seats|release`: the machines holding its seats, and freeing one (a machine lost
 * before its plugin released it), with the same rules as the licence routes (LicenceSeats).
 */
import { Refusal } from '@hearth/core';
import { DEFAULT_NAMESPACE } from '@hearth/core/manifests';
import { LICENCE_KEY_PREFIX, LicenceSeats, licenceAudienceOf, listLicenceKeys, mintLicenceKey, revokeLicenceKey } from '@hearth/core/licence';
import { organisationNamed } from '@hearth/core/tenancy';
import { CliError, emit, keyIdArgument, otherNamespacesHint, table } from '../output';
import { refusalOnTheCommandLine } from '../refusals';
import { type Runtime, withRuntime } from '../runtime';

const KEY_NAME_MAX = 200;

interface ProjectOptions {
  project: string;
  namespace?: string;
}

async function organisationOrFail(rt: Runtime, opts: ProjectOptions) {
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  const organisation = await organisationNamed(rt.db, namespace, opts.project);
  if (organisation) return organisation;
  // The same name elsewhere: the likely mistake is the namespace (default unless --namespace names one).
  const elsewhere = (await rt
    .db('projects')
    .where({ name: opts.project })
    .whereNot({ namespace })
    .whereNull('retired_at')
    .orderBy('namespace')
    .pluck('namespace')) as string[];
  throw new CliError(`no project "${opts.project}" in namespace "${namespace}"${otherNamespacesHint(elsewhere)}`);
}

export async function runLicenceKeysCreate(opts: ProjectOptions & { name: string; product?: string[]; json?: boolean }): Promise<void> {
  const name = opts.name.trim();
  if (name.length < 1 || name.length > KEY_NAME_MAX) throw new CliError(`--name must be 1-${KEY_NAME_MAX} characters (says what the key is for)`);
  const products = opts.product ?? [];
  if (products.length === 0) throw new CliError('--product is required: name each product the key covers (repeat it for several)');
  await withRuntime({}, async (rt) => {
    const organisation = await organisationOrFail(rt, opts);
    const minted = await mintLicenceKey(rt.db, organisation.id, name, products).catch((err: unknown) => {
      throw err instanceof Refusal ? refusalOnTheCommandLine(err, { products: '--product' }) : err;
    });
    const project = `${organisation.namespace}/${organisation.name}`;
    const audience = licenceAudienceOf(organisation);
    emit(!!opts.json, { keyId: minted.keyId, key: minted.key, project, name: minted.name, products: minted.products, audience }, () =>
      [
        `licence key ${minted.keyId} "${minted.name}" for ${project}, covering ${minted.products.join(', ')}`,
        minted.key,
        '(the whole key is shown this once)',
        `its tokens' audience: ${audience}`,
      ].join('\n'),
    );
  });
}

export async function runLicenceKeysList(opts: ProjectOptions & { json?: boolean }): Promise<void> {
  await withRuntime({}, async (rt) => {
    const organisation = await organisationOrFail(rt, opts);
    const project = `${organisation.namespace}/${organisation.name}`;
    const keys = (await listLicenceKeys(rt.db, organisation.id)).map(({ projectId: _id, ...key }) => key);
    emit(!!opts.json, { project, audience: licenceAudienceOf(organisation), keys }, () =>
      keys.length === 0
        ? `no licence keys in ${project}`
        : table(
            ['KEY ID', 'NAME', 'PRODUCTS', 'SECRET', 'CREATED', 'LAST USED', 'REVOKED'],
            keys.map((k) => [
              k.keyId,
              k.name,
              k.products.length ? k.products.join(',') : '(none)',
              `…${k.secretHint}`,
              k.createdAt,
              k.lastUsedAt ?? 'never',
              k.revokedAt,
            ]),
          ),
    );
  });
}

export async function runLicenceKeysRevoke(opts: { keyId: string; json?: boolean }): Promise<void> {
  // Before anything is opened: a whole key pasted in is refused without a database.
  const keyId = keyIdArgument(opts.keyId, LICENCE_KEY_PREFIX, 'hearth licence-keys revoke');
  await withRuntime({}, async (rt, bus) => {
    // Announced to every process once the revocation commits: the key is refused at once.
    const revoked = await revokeLicenceKey(rt.db, bus, keyId);
    if (!revoked) throw new CliError(`no live licence key has id "${keyId}"`);
    const { projectId: _id, ...key } = revoked;
    emit(!!opts.json, key, () => `revoked licence key ${revoked.keyId} "${revoked.name}"`);
  });
}

export async function runLicenceSeats(opts: ProjectOptions & { json?: boolean }): Promise<void> {
  await withRuntime({}, async (rt) => {
    const organisation = await organisationOrFail(rt, opts);
    const project = `${organisation.namespace}/${organisation.name}`;
    const { seats, limit } = await new LicenceSeats().list(rt.db, organisation);
    emit(!!opts.json, { project, limit, seats }, () =>
      [
        `${seats.length} of ${limit} seats taken in ${project}`,
        ...(seats.length === 0
          ? []
          : [
              table(
                ['MACHINE', 'PRODUCT', 'VERSION', 'ACTIVATED', 'CHECKED'],
                seats.map((s) => [s.machineId, s.product, s.version, s.activatedAt, s.checkedAt]),
              ),
            ]),
      ].join('\n'),
    );
  });
}

export async function runLicenceRelease(opts: ProjectOptions & { machine: string; json?: boolean }): Promise<void> {
  await withRuntime({}, async (rt) => {
    const organisation = await organisationOrFail(rt, opts);
    const released = await new LicenceSeats().release(rt.db, organisation, opts.machine);
    const project = `${organisation.namespace}/${organisation.name}`;
    emit(!!opts.json, { project, machineId: opts.machine, released }, () =>
      released ? `released the seat of ${opts.machine} in ${project}` : `${opts.machine} held no seat in ${project}; nothing changed`,
    );
  });
}
