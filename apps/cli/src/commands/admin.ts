import path from 'node:path';
import { Refusal } from '@hearth/core';
import { ManifestError, applyManifests, loadManifests } from '@hearth/core/manifests';
import { listServerKeys, mintServerKey, revokeServerKey, rotateSigningKey, PLAYER_SIGNING_KEYS, SERVER_KEY_PREFIX } from '@hearth/core/auth';
import { loadEnvironmentByAppKey } from '@hearth/core/tenancy';
import { migrate } from '@hearth/core/db';
import { LICENCE_SIGNING_KEYS } from '@hearth/core/licence';
import { CliError, emit, keyIdArgument, table } from '../output';
import { type Runtime, withRuntime } from '../runtime';

export async function runMigrate(opts: { json?: boolean }): Promise<void> {
  await withRuntime({}, async (rt) => {
    const { migrations: applied, functions } = await migrate(rt.db);
    emit(!!opts.json, { applied, functions }, () =>
      [
        applied.length ? `applied ${applied.length} migration(s):\n  ${applied.join('\n  ')}` : 'database is up to date',
        ...(functions.length ? [`applied ${functions.length} function file(s):\n  ${functions.join('\n  ')}`] : []),
      ].join('\n'),
    );
  });
}

export async function runApply(opts: { file: string; json?: boolean }): Promise<void> {
  let docs;
  try {
    docs = loadManifests(path.resolve(opts.file));
  } catch (err) {
    if (err instanceof ManifestError) throw new CliError(err.message);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new CliError(`${opts.file}: no such file or folder`);
    throw err;
  }
  await withRuntime({}, async (rt, bus) => {
    try {
      const results = await applyManifests(rt.db, docs, bus);
      emit(!!opts.json, { results }, () =>
        results
          .map((r) => {
            const line = `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}: ${r.action}`;
            const minted = r.serverKey ?? r.licenceKey;
            return minted ? `${line}\n  key (shown once): ${minted.key}` : line;
          })
          .join('\n'),
      );
    } catch (err) {
      if (err instanceof ManifestError) throw new CliError(`nothing applied: ${err.message}`);
      throw err;
    }
  });
}

export async function environmentOrFail(rt: Runtime, appKey: string) {
  const env = await loadEnvironmentByAppKey(rt.db, appKey);
  if (!env) throw new CliError(`no environment has app key "${appKey}"`);
  return env;
}

const KEY_NAME_MAX = 200;

export async function runKeysCreate(opts: { environment: string; name: string; json?: boolean }): Promise<void> {
  const name = opts.name.trim();
  if (name.length < 1 || name.length > KEY_NAME_MAX) throw new CliError(`--name must be 1-${KEY_NAME_MAX} characters (says what the key is for)`);
  await withRuntime({}, async (rt) => {
    const env = await environmentOrFail(rt, opts.environment);
    try {
      const minted = await mintServerKey(rt.db, env.id, name, env.plan.serverKeysPerEnvironment);
      emit(
        !!opts.json,
        { keyId: minted.keyId, key: minted.key, environment: env.appKey, name: minted.name },
        () => `server key ${minted.keyId} "${minted.name}" for ${env.appKey}\n${minted.key}\n(the whole key is shown this once)`,
      );
    } catch (err) {
      if (err instanceof Refusal && err.details?.quota) {
        throw new CliError(`${err.message} (plan "${env.plan.name}": ${err.details.quota} ${err.details.limit})`);
      }
      if (err instanceof Refusal) throw new CliError(err.message);
      throw err;
    }
  });
}

export async function runKeysList(opts: { environment: string; json?: boolean }): Promise<void> {
  await withRuntime({}, async (rt) => {
    const env = await environmentOrFail(rt, opts.environment);
    const keys = await listServerKeys(rt.db, env.id);
    emit(!!opts.json, { environment: env.appKey, keys }, () =>
      keys.length === 0
        ? `no server keys in ${env.appKey}`
        : table(
            ['KEY ID', 'NAME', 'SECRET', 'CREATED', 'LAST USED', 'REVOKED'],
            keys.map((k) => [k.keyId, k.name, `…${k.secretHint}`, k.createdAt, k.lastUsedAt ?? 'never', k.revokedAt]),
          ),
    );
  });
}

export async function runKeysRevoke(opts: { keyId: string; json?: boolean }): Promise<void> {
  // Before anything is opened: a whole key pasted in is refused without a database.
  const keyId = keyIdArgument(opts.keyId, SERVER_KEY_PREFIX, 'hearth keys revoke');
  await withRuntime({}, async (rt, bus) => {
    // Announced to every process once the revocation commits (the same function a ServerKey's reconciler calls).
    const revoked = await revokeServerKey(rt.db, bus, keyId);
    if (!revoked) throw new CliError(`no live server key has id "${keyId}"`);
    emit(!!opts.json, revoked, () => `revoked server key ${revoked.keyId} "${revoked.name}"`);
  });
}

const SIGNING_KEY_SETS = { player: PLAYER_SIGNING_KEYS, licence: LICENCE_SIGNING_KEYS };

export async function runSigningKeysRotate(opts: { keySet?: string; json?: boolean }): Promise<void> {
  const name = opts.keySet ?? 'player';
  if (name !== 'player' && name !== 'licence') throw new CliError('--key-set must be player or licence');
  await withRuntime({ masterKey: true }, async (rt, bus) => {
    const result = await rotateSigningKey(rt.db, rt.config.masterKey, SIGNING_KEY_SETS[name]);
    await bus.announce({ kind: 'signing-keys' });
    emit(!!opts.json, result, () => `new signing key ${result.kid}; retired ${result.retired.join(', ') || 'none'} (still published until its tokens expire)`);
  });
}
