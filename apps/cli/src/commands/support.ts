import { SupportService, type SupportFiling, type SupportKind } from '@hearth/core/support';
import { CliError, emit } from '../output';
import { environmentOrFail } from './admin';
import { withRuntime } from '../runtime';

const KINDS: Record<string, SupportKind> = { requests: 'request', reports: 'report' };
const LIMIT_MAX = 1000;

/** `hearth support list`: an environment's support requests and player reports, newest first. */
export async function runSupportList(opts: { environment: string; kind?: string; limit?: string; json?: boolean }): Promise<void> {
  const kind = opts.kind === undefined ? undefined : KINDS[opts.kind];
  if (opts.kind !== undefined && !kind) throw new CliError(`--kind must be requests or reports, not "${opts.kind}"`);
  const limit = opts.limit === undefined ? 100 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX) throw new CliError(`--limit must be a whole number from 1 to ${LIMIT_MAX}`);
  await withRuntime({}, async (rt) => {
    const env = await environmentOrFail(rt, opts.environment);
    const filings = await new SupportService().list(rt.db, env.id, { kind, limit });
    const what = opts.kind ?? 'support requests or reports';
    emit(!!opts.json, { environment: env.appKey, filings }, () =>
      filings.length === 0 ? `no ${what} in ${env.appKey}` : filings.map(describeFiling).join('\n\n'),
    );
  });
}

/** A filing for people: a heading line, then its fields indented. */
function describeFiling(f: SupportFiling): string {
  const indent = (text: string) => text.replace(/\n/g, '\n    ');
  if (f.kind === 'request') {
    const lines = [`${f.createdAt}  request ${f.id}  from player ${f.playerId}`, `  subject: ${f.subject}`];
    if (f.contactEmail) lines.push(`  contact: ${f.contactEmail}`);
    lines.push(`  message: ${indent(f.message ?? '')}`);
    return lines.join('\n');
  }
  const about = f.reportedPlayerId ? `player ${f.reportedPlayerId}` : 'a deleted player';
  const lines = [`${f.createdAt}  report ${f.id}  from player ${f.playerId} about ${about}`, `  reason: ${f.reason}`];
  if (f.details) lines.push(`  details: ${indent(f.details)}`);
  return lines.join('\n');
}
