/**
 * Crashes are grouped into issues by a fingerprint of where they happened (docs/crashes.md,
 * "Grouping"): the first FINGERPRINT_FRAMES frames of the callstack, each normalised so that what
 * changes from one build or machine to the next (addresses, offsets, source paths, line numbers)
 * does not split an issue, while a different function at the top does.
 */
import { createHash } from 'node:crypto';

export const FINGERPRINT_FRAMES = 5;

/**
 * Frames of the crash-reporting machinery itself, on top of every assert and many crashes; skipped
 * while they lead the stack, so the first frame hashed is the game's or the engine's own code.
 */
const REPORTING_FRAME =
  /(?:^|[!\s])(?:FDebug::|FGenericPlatformMisc::RaiseException|FWindowsPlatformMisc::RaiseException|FGenericPlatformStackWalk::|FWindowsPlatformStackWalk::|FPlatformStackWalk::|FOutputDevice\w*::|FMsg::|UE::Assert::|CheckVerifyFailed|AssertFailed|ReportAssert|ReportEnsure|ReportCrash|RaiseException\b|__report_gsfailure)/;

/** One frame as it is hashed, or '' for a line that carries nothing once normalised. */
export function normaliseFrame(line: string): string {
  return line
    .replace(/\[[^\]]*\]/g, ' ') // [D:\Build\Source\File.cpp:120], [in Module.dll]
    .replace(/\(filename not found\)/gi, ' ')
    .replace(/Address\s*=\s*\S+/gi, ' ')
    .replace(/\b0x[0-9a-f]+\b/gi, ' ') // addresses
    .replace(/\+\s*\d+\b/g, ' ') // + 1234 offsets (after the hex ones are gone)
    .replace(/(?:[A-Za-z]:)?(?:[\\/][^\s\\/()]+)+[\\/]?/g, ' ') // paths
    .replace(/\b[\w.-]+\.(?:cpp|cc|cxx|c|h|hpp|hxx|inl|mm|m|cs|swift|rs)(?::\d+)+\b/gi, ' ') // File.cpp:120 left without a path
    .replace(/(?::\d+)+\s*$/g, ' ') // trailing :line[:column]
    .replace(/^\s*#?\d+\s+/, '') // leading frame numbers (#0, 12)
    .replace(/\s+/g, ' ')
    .trim();
}

/** The frames hashed: normalised, empty ones dropped, reporting frames on top skipped, the first N. */
export function fingerprintFrames(callstack: string | null | undefined, count = FINGERPRINT_FRAMES): string[] {
  const frames = (callstack ?? '')
    .split(/\r?\n/)
    .map(normaliseFrame)
    .filter((f) => f !== '');
  let first = 0;
  while (first < frames.length && REPORTING_FRAME.test(frames[first])) first++;
  // A stack that is nothing but reporting frames still groups by them.
  return (first === frames.length ? frames : frames.slice(first)).slice(0, count);
}

/** What stands in for a stack when there is none: the message with numbers and addresses blanked. */
export function normaliseMessage(message: string): string {
  return message
    .replace(/\b0x[0-9a-f]+\b/gi, '#')
    .replace(/\d+/g, '#')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 512);
}

export interface Fingerprint {
  fingerprint: string;
  /** What was hashed, shown with the issue: the frames, or `message: …` / `type: …` when there were none. */
  frames: string[];
}

/**
 * The symbolicated CallStack when it has frames, else the portable one (module + offset; offsets
 * stripped, so it groups by module only), else the normalised error message, else the crash type.
 */
export function crashFingerprint(crash: {
  callstack?: string | null;
  portableCallstack?: string | null;
  errorMessage?: string | null;
  type: string;
}): Fingerprint {
  let frames = fingerprintFrames(crash.callstack);
  if (frames.length === 0) frames = fingerprintFrames(crash.portableCallstack);
  if (frames.length === 0) frames = crash.errorMessage?.trim() ? [`message: ${normaliseMessage(crash.errorMessage)}`] : [`type: ${crash.type}`];
  const fingerprint = createHash('sha256').update(frames.join('\n')).digest('hex');
  return { fingerprint, frames };
}
