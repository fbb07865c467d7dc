/**
 * From an upload's body to a parsed crash: inflate (capped), read the archive, find the context and
 * read it. Every way this can fail for good is a CrashPoison with its reason.
 */
import { inflateCapped } from './inflate';
import { classifyFile, parseCrashArchive, type ArchiveFile, type CrashArchive, type FileKind } from './container';
import { readCrashContext, type CrashContext } from './context';
import { CrashPoison } from './poison';

export * from './poison';
export * from './inflate';
export * from './container';
export * from './context';

export interface ParsedCrash {
  archive: CrashArchive;
  context: CrashContext;
  files: (ArchiveFile & { kind: FileKind })[];
}

export async function parseCrashUpload(body: Buffer, maxInflatedBytes?: number): Promise<ParsedCrash> {
  const archive = parseCrashArchive(await inflateCapped(body, maxInflatedBytes));
  const files = archive.files.map((f) => ({ ...f, kind: classifyFile(f) }));
  const contextFile = files.find((f) => f.kind === 'context');
  if (!contextFile) throw new CrashPoison('no-context', `no CrashContext.runtime-xml among ${files.length} files`);
  return { archive, context: readCrashContext(contextFile.data), files };
}
