/**
 * Recorded crashes and their issues (docs/crashes.md). The worker records a parsed crash and
 * finishes its upload in one transaction (`recordCrash`), or finishes it as poison
 * (`markCrashUploadPoison`); staff read issues and crashes (`hearth crashes`).
 */
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { crashFingerprint } from './fingerprint';
import { CRASH_QUEUE_SCHEMA, CRASH_UPLOAD_QUEUE } from './queue';

export interface CrashUpload {
  id: string;
  environmentId: string;
  storageKey: string;
  sizeBytes: number;
  userId: string | null;
  appVersion: string | null;
  receivedAt: Date;
  state: 'queued' | 'recorded' | 'poison';
  poisonReason: string | null;
  crashId: string | null;
}

export async function loadCrashUpload(db: Queryable, uploadId: string): Promise<CrashUpload | null> {
  const row = await db('crash_uploads').where({ id: uploadId }).first();
  if (!row) return null;
  return {
    id: row.id,
    environmentId: String(row.environment_id),
    storageKey: row.storage_key,
    sizeBytes: Number(row.size_bytes),
    userId: row.user_id,
    appVersion: row.app_version,
    receivedAt: row.received_at,
    state: row.state,
    poisonReason: row.poison_reason,
    crashId: row.crash_id,
  };
}

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * A crash's id follows from its upload's: a retried job stores its files under the same keys
 * (overwriting, never adding) and can only ever record the same crash. 22 base62 characters of a hash.
 */
export function crashIdOf(uploadId: string): string {
  let n = BigInt(`0x${createHash('sha256').update(`hearth-crash:${uploadId}`).digest('hex')}`);
  let id = '';
  for (let i = 0; i < 22; i++) {
    id += ALPHABET[Number(n % 62n)];
    n /= 62n;
  }
  return id;
}

/** Where a recorded crash's file lives in object storage. */
export function crashFileKey(environmentId: string, crashId: string, fileName: string): string {
  return `crashes/${environmentId}/${crashId}/${fileName}`;
}

/**
 * An archive's file name as one object-key part: its last path part, characters outside
 * `[A-Za-z0-9._-]` replaced by `_`, never `.` or `..`, at most 200 characters.
 */
export function storedFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const safe = base.replace(/[^A-Za-z0-9._-]/g, '_').slice(-200);
  return safe === '' || /^\.+$/.test(safe) ? 'file' : safe;
}

export interface CrashFileRecord {
  name: string;
  kind: string;
  key: string;
  sizeBytes: number;
  sha256: string;
}

/** What a crash reports of itself (the context XML and the upload's query), as recorded and as read back. */
export interface CrashFields {
  crashGuid: string | null;
  /** crash, assert, ensure, gpu-crash, hang, abnormal-shutdown, out-of-memory, or UE's own word in lower case. */
  type: string;
  errorMessage: string | null;
  callstack: string | null;
  portableCallstack: string | null;
  engineVersion: string | null;
  buildVersion: string | null;
  buildConfiguration: string | null;
  platform: string | null;
  gameName: string | null;
  executableName: string | null;
  userId: string | null;
  userName: string | null;
  epicAccountId: string | null;
  gameData: Record<string, string>;
}

export interface CrashRecordInput extends CrashFields {
  uploadId: string;
  layout: 'ue5' | 'ue4';
  /** GameData's HearthPlayerId, as the game wrote it; kept only if that player exists in the environment. */
  claimedPlayerId: string | null;
  crashedAt: Date | null;
  files: CrashFileRecord[];
}

export type RecordOutcome = { recorded: true; crashId: string; issueId: string } | { recorded: false; state: string; crashId: string | null };

/** The version an issue is seen in: the build's, else the engine's, else `unknown`. */
function versionOf(input: CrashRecordInput): string {
  return input.buildVersion ?? input.engineVersion ?? 'unknown';
}

function titleOf(input: CrashRecordInput, frames: string[]): string {
  const line = input.errorMessage
    ?.split(/\r?\n/)
    .find((l) => l.trim() !== '')
    ?.trim();
  return (line ?? frames[0] ?? input.type).slice(0, 200);
}

/**
 * Records the crash of a queued upload and finishes the upload (`recorded`, its crash id), in one
 * transaction: the issue counted, the version counted, the crash inserted, the upload finished. An
 * upload already finished (another worker won, or this is a retry after a commit) changes nothing.
 */
export async function recordCrash(db: Queryable, input: CrashRecordInput): Promise<RecordOutcome> {
  return inTransaction(db, async (trx) => {
    const upload = await trx('crash_uploads').where({ id: input.uploadId }).forUpdate().first('environment_id', 'state', 'crash_id', 'received_at', 'user_id');
    if (!upload) throw new Error(`no crash upload ${input.uploadId}`);
    if (upload.state !== 'queued') return { recorded: false, state: upload.state, crashId: upload.crash_id };
    const environmentId = String(upload.environment_id);
    const crashId = crashIdOf(input.uploadId);
    const receivedAt: Date = upload.received_at;

    const playerId = input.claimedPlayerId
      ? ((await trx('players').where({ id: input.claimedPlayerId, environment_id: environmentId }).first('id'))?.id ?? null)
      : null;
    const { fingerprint, frames } = crashFingerprint(input);
    // Concurrent workers meet on the unique (environment, fingerprint): one inserts, the others count.
    const issue = (
      await trx.raw(
        `INSERT INTO crash_issues (environment_id, fingerprint, title, frames, crash_count, first_seen, last_seen)
         VALUES (?, ?, ?, ?, 1, ?, ?)
         ON CONFLICT (environment_id, fingerprint) DO UPDATE SET
           crash_count = crash_issues.crash_count + 1,
           first_seen = least(crash_issues.first_seen, excluded.first_seen),
           last_seen = greatest(crash_issues.last_seen, excluded.last_seen)
         RETURNING id`,
        [environmentId, fingerprint, titleOf(input, frames), frames, receivedAt, receivedAt],
      )
    ).rows[0];
    await trx.raw(
      `INSERT INTO crash_issue_versions (issue_id, version, crash_count, first_seen, last_seen) VALUES (?, ?, 1, ?, ?)
       ON CONFLICT (issue_id, version) DO UPDATE SET
         crash_count = crash_issue_versions.crash_count + 1,
         first_seen = least(crash_issue_versions.first_seen, excluded.first_seen),
         last_seen = greatest(crash_issue_versions.last_seen, excluded.last_seen)`,
      [issue.id, versionOf(input), receivedAt, receivedAt],
    );
    await trx('crashes').insert({
      id: crashId,
      environment_id: environmentId,
      upload_id: input.uploadId,
      issue_id: issue.id,
      layout: input.layout,
      crash_guid: input.crashGuid,
      type: input.type,
      error_message: input.errorMessage,
      callstack: input.callstack,
      portable_callstack: input.portableCallstack,
      engine_version: input.engineVersion,
      build_version: input.buildVersion,
      build_configuration: input.buildConfiguration,
      platform: input.platform,
      game_name: input.gameName,
      executable_name: input.executableName,
      user_id: input.userId ?? upload.user_id,
      user_name: input.userName,
      epic_account_id: input.epicAccountId,
      player_id: playerId,
      game_data: JSON.stringify(input.gameData),
      crashed_at: input.crashedAt,
      received_at: receivedAt,
      files: JSON.stringify(input.files),
    });
    await trx('crash_uploads')
      .where({ id: input.uploadId })
      .update({ state: 'recorded', crash_id: crashId, finished_at: trx.raw('clock_timestamp()') });
    return { recorded: true, crashId, issueId: String(issue.id) };
  });
}

/** Finishes a queued upload as poison with its reason; false when it was already finished. */
export async function markCrashUploadPoison(db: Queryable, uploadId: string, reason: string): Promise<boolean> {
  const changed = await db('crash_uploads')
    .where({ id: uploadId, state: 'queued' })
    .update({ state: 'poison', poison_reason: reason, finished_at: db.raw('clock_timestamp()') });
  return changed === 1;
}

/**
 * Uploads still `queued` whose every job has failed: a job whose last attempt expired (its worker was
 * killed) is failed by pg-boss's maintenance without any worker seeing it. They are finished as poison
 * `retries-exhausted`, like a last attempt that failed in a worker; answers their ids.
 */
export async function finishAbandonedCrashUploads(db: Queryable): Promise<string[]> {
  const result = await db.raw(
    `UPDATE crash_uploads u SET state = 'poison', poison_reason = 'retries-exhausted', finished_at = clock_timestamp()
      WHERE u.state = 'queued'
        AND EXISTS (SELECT 1 FROM ${CRASH_QUEUE_SCHEMA}.job j WHERE j.name = ? AND j.data->>'uploadId' = u.id AND j.state = 'failed')
        AND NOT EXISTS (SELECT 1 FROM ${CRASH_QUEUE_SCHEMA}.job j WHERE j.name = ? AND j.data->>'uploadId' = u.id AND j.state <> 'failed')
      RETURNING u.id`,
    [CRASH_UPLOAD_QUEUE, CRASH_UPLOAD_QUEUE],
  );
  return result.rows.map((r: { id: string }) => r.id);
}

export interface CrashIssueSummary {
  id: string;
  title: string;
  fingerprint: string;
  frames: string[];
  count: number;
  firstSeen: string;
  lastSeen: string;
  versions: { version: string; count: number; lastSeen: string }[];
}

function issueOf(row: Record<string, any>, versions: CrashIssueSummary['versions']): CrashIssueSummary {
  return {
    id: String(row.id),
    title: row.title,
    fingerprint: row.fingerprint,
    frames: row.frames,
    count: Number(row.crash_count),
    firstSeen: new Date(row.first_seen).toISOString(),
    lastSeen: new Date(row.last_seen).toISOString(),
    versions,
  };
}

async function versionsOf(db: Queryable, issueIds: string[]): Promise<Map<string, CrashIssueSummary['versions']>> {
  const rows = issueIds.length
    ? await db('crash_issue_versions')
        .whereIn('issue_id', issueIds)
        .orderBy([{ column: 'issue_id' }, { column: 'last_seen', order: 'desc' }, { column: 'version' }])
    : [];
  const out = new Map<string, CrashIssueSummary['versions']>();
  for (const r of rows) {
    const list = out.get(String(r.issue_id)) ?? [];
    list.push({ version: r.version, count: Number(r.crash_count), lastSeen: new Date(r.last_seen).toISOString() });
    out.set(String(r.issue_id), list);
  }
  return out;
}

/** An environment's issues, most recently seen first, with their counts and versions. */
export async function listCrashIssues(db: Queryable, environmentId: string, opts: { limit: number }): Promise<CrashIssueSummary[]> {
  const rows = await db('crash_issues')
    .where({ environment_id: environmentId })
    .orderBy([
      { column: 'last_seen', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(opts.limit);
  const versions = await versionsOf(
    db,
    rows.map((r) => String(r.id)),
  );
  return rows.map((r) => issueOf(r, versions.get(String(r.id)) ?? []));
}

export interface CrashDetail extends CrashFields {
  id: string;
  uploadId: string;
  issueId: string;
  layout: string;
  playerId: string | null;
  crashedAt: string | null;
  receivedAt: string;
  recordedAt: string;
  files: CrashFileRecord[];
}

function crashOf(r: Record<string, any>): CrashDetail {
  return {
    id: r.id,
    uploadId: r.upload_id,
    issueId: String(r.issue_id),
    layout: r.layout,
    crashGuid: r.crash_guid,
    type: r.type,
    errorMessage: r.error_message,
    callstack: r.callstack,
    portableCallstack: r.portable_callstack,
    engineVersion: r.engine_version,
    buildVersion: r.build_version,
    buildConfiguration: r.build_configuration,
    platform: r.platform,
    gameName: r.game_name,
    executableName: r.executable_name,
    userId: r.user_id,
    userName: r.user_name,
    epicAccountId: r.epic_account_id,
    playerId: r.player_id,
    gameData: r.game_data,
    crashedAt: r.crashed_at ? new Date(r.crashed_at).toISOString() : null,
    receivedAt: new Date(r.received_at).toISOString(),
    recordedAt: new Date(r.recorded_at).toISOString(),
    files: r.files,
  };
}

/** One crash of the environment with its fields and the keys of its files, or null. */
export async function getCrash(db: Queryable, environmentId: string, crashId: string): Promise<CrashDetail | null> {
  const row = await db('crashes').where({ id: crashId, environment_id: environmentId }).first();
  return row ? crashOf(row) : null;
}

/** One issue of the environment and its newest crashes, or null. */
export async function getCrashIssue(
  db: Queryable,
  environmentId: string,
  issueId: string,
  opts: { limit: number },
): Promise<(CrashIssueSummary & { crashes: CrashDetail[] }) | null> {
  if (!/^\d{1,18}$/.test(issueId)) return null;
  const row = await db('crash_issues').where({ id: issueId, environment_id: environmentId }).first();
  if (!row) return null;
  const versions = await versionsOf(db, [String(row.id)]);
  const crashes = await db('crashes')
    .where({ issue_id: row.id })
    .orderBy([{ column: 'received_at', order: 'desc' }, { column: 'id' }])
    .limit(opts.limit);
  return { ...issueOf(row, versions.get(String(row.id)) ?? []), crashes: crashes.map(crashOf) };
}

/** Counts of an environment's uploads by state and poison reason (what `hearth crashes list` shows under the issues). */
export async function crashUploadCounts(db: Queryable, environmentId: string): Promise<{ queued: number; recorded: number; poison: Record<string, number> }> {
  const rows = await db('crash_uploads')
    .where({ environment_id: environmentId })
    .groupBy('state', 'poison_reason')
    .select('state', 'poison_reason', db.raw('count(*)::int AS n'));
  const out = { queued: 0, recorded: 0, poison: {} as Record<string, number> };
  for (const r of rows) {
    if (r.state === 'poison') out.poison[r.poison_reason] = r.n;
    else out[r.state as 'queued' | 'recorded'] = r.n;
  }
  return out;
}
