/**
 * POST /crash-reports/:appKey (spec §4 Crash reports, §8): what Unreal's CrashReportClient sends to
 * its DataRouterUrl. The body is streamed into object storage as it arrives (the API never holds it
 * whole), then the upload is recorded and its job queued in one transaction (CrashUploadService).
 * docs/crashes.md "Uploading crash reports".
 */
import { Refusal, refuse } from '@hearth/core';
import { CRASH_UPLOADS_PER_ADDRESS, CRASH_UPLOADS_PER_ENVIRONMENT, crashUploadChecks } from '@hearth/core/crashes';
import { CrashReceived, CrashReportPath, CrashReporterQuery } from '@hearth/core/shapes';
import { BODY_LIMITS } from '../../http/route';
import { crashesRoute } from './area';

const LIMITS_NOTE =
  `At most ${BODY_LIMITS.crashUpload} bytes (20 MB); more than ${CRASH_UPLOADS_PER_ADDRESS.limit} uploads per ` +
  `${CRASH_UPLOADS_PER_ADDRESS.windowSeconds / 60} minutes from one address to the environment, or more than ` +
  `${CRASH_UPLOADS_PER_ENVIRONMENT.limit} per hour to the environment from everybody, are refused with 429 and ` +
  'Retry-After (clock windows; a refused upload counts in neither).';

export const uploadCrashReport = crashesRoute({
  operationId: 'uploadCrashReport',
  method: 'POST',
  path: '/crash-reports/:appKey',
  summary: "Receive a crash report as Unreal's CrashReportClient sends it",
  description:
    "The body is the compressed crash (a zlib stream, application/octet-stream) as the engine's reporter sends it to " +
    "its DataRouterUrl. 200 once the upload is kept and queued; it is read into the environment's crashes moments " +
    `later. ${LIMITS_NOTE}`,
  credential: 'none',
  environmentFrom: 'path-app-key',
  params: CrashReportPath,
  query: CrashReporterQuery,
  bodyMode: 'stream',
  bodyLimit: BODY_LIMITS.crashUpload,
  routeLimits: crashUploadChecks,
  success: { status: 200, description: 'The upload is kept and queued', schema: CrashReceived },
  refusals: ['unavailable'],
  handler: async (ctx) => {
    // An upload that declares no body, or a length of 0, is refused before anything is stored; a
    // chunked body that turns out empty is refused once it has ended (CrashUploadService).
    const body = ctx.bodyStream();
    if (!body) throw refuse.invalid('body', 'The crash report is empty.');
    try {
      const received = await ctx.core.crashUploads.receive(ctx.db, {
        environment: ctx.env,
        body,
        maxBytes: BODY_LIMITS.crashUpload,
        clientAddress: ctx.request.ip,
        reporter: ctx.query,
      });
      ctx.metrics.crashUploadsAccepted.inc();
      ctx.metrics.crashUploadBytes.inc(received.sizeBytes);
      ctx.log.info({ uploadId: received.uploadId, environmentId: ctx.env.id, sizeBytes: received.sizeBytes }, 'crash upload received');
      return { body: { received: true as const } };
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause;
      if (err instanceof Refusal && err.code === 'unavailable' && cause) ctx.log.warn({ err: cause }, 'crash upload not kept');
      throw err;
    }
  },
});
