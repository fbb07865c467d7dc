/**
 * Unreal's crash archive, as CrashReportClient sends it once inflated (docs/crashes.md, "The crash
 * format"; getsentry/symbolic's symbolic-unreal container.rs is the public description). Little-endian:
 *
 *   String = u32 length + that many bytes, NUL-padded (UE pads names to 260): trailing NULs trimmed.
 *   Header = DirectoryName: String, FileName: String, UncompressedSize: i32, FileCount: i32.
 *   Entry  = Index: i32, FileName: String, Length: i32, Data[Length].
 *
 *   UE5 ("CR1"): the bytes "CR1", the header, FileCount entries, nothing after.
 *   UE4 (legacy): a placeholder header, the entries, the real header last (its FileCount is the
 *   archive's last four bytes), nothing after.
 *
 * Every length is checked against the bytes left before anything is read or allocated; FileCount is
 * capped by what the bytes can hold (an entry is at least 12 bytes) and by MAX_FILES. Anything else
 * is poison with a reason.
 */
import { CrashPoison } from './poison';

export const CR1_MAGIC = Buffer.from('CR1', 'latin1');
/** More files than a crash ever has (UE sends a handful): a FileCount past it is a lie. */
export const MAX_FILES = 256;
/** Names are paths at most (UE pads them to 260); a string longer than this is a lie. */
export const MAX_STRING_BYTES = 4096;
/** index + name length + data length: the least an entry takes. */
const MIN_ENTRY_BYTES = 12;

export interface ArchiveFile {
  index: number;
  name: string;
  data: Buffer;
}

export interface CrashArchive {
  layout: 'ue5' | 'ue4';
  directoryName: string;
  fileName: string;
  uncompressedSize: number;
  files: ArchiveFile[];
}

class Reader {
  offset = 0;
  constructor(
    readonly bytes: Buffer,
    readonly end: number = bytes.length,
  ) {}

  get left(): number {
    return this.end - this.offset;
  }

  private need(n: number, what: string): void {
    if (n > this.left) throw new CrashPoison('truncated', `${what} needs ${n} bytes at offset ${this.offset}, ${this.left} left`);
  }

  i32(what: string): number {
    this.need(4, what);
    const v = this.bytes.readInt32LE(this.offset);
    this.offset += 4;
    return v;
  }

  /** A length field: negative or past the bytes left is `length-out-of-bounds`, whatever the cause. */
  length(what: string, max: number): number {
    const n = this.i32(what);
    if (n < 0 || n > max || n > this.left) {
      throw new CrashPoison(
        'length-out-of-bounds',
        `${what} is ${n} at offset ${this.offset - 4} (${this.left} bytes left${max < this.left ? `, at most ${max}` : ''})`,
      );
    }
    return n;
  }

  take(n: number): Buffer {
    const out = this.bytes.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }

  string(what: string): string {
    const n = this.length(`${what}'s length`, MAX_STRING_BYTES);
    return trimNuls(this.take(n).toString('latin1'));
  }
}

/** UE writes fixed-size, NUL-padded ANSI buffers: everything from the first NUL on is padding. */
function trimNuls(text: string): string {
  const nul = text.indexOf('\0');
  return nul === -1 ? text : text.slice(0, nul);
}

interface Header {
  directoryName: string;
  fileName: string;
  uncompressedSize: number;
  fileCount: number;
}

function readHeader(r: Reader): Header {
  const directoryName = r.string('DirectoryName');
  const fileName = r.string('FileName');
  const uncompressedSize = r.i32('UncompressedSize');
  const fileCount = r.i32('FileCount');
  return { directoryName, fileName, uncompressedSize, fileCount };
}

function checkFileCount(count: number, bytes: number): void {
  const fits = Math.floor(bytes / MIN_ENTRY_BYTES);
  if (count < 0 || count > MAX_FILES || count > fits) {
    throw new CrashPoison('too-many-files', `FileCount ${count} (at most ${Math.min(MAX_FILES, fits)} for ${bytes} bytes)`);
  }
}

function readEntries(r: Reader, count: number): ArchiveFile[] {
  const files: ArchiveFile[] = [];
  for (let i = 0; i < count; i++) {
    const index = r.i32(`file ${i}'s index`);
    const name = r.string(`file ${i}'s name`);
    const length = r.length(`file ${i} (${JSON.stringify(name)})'s length`, Number.MAX_SAFE_INTEGER);
    files.push({ index, name, data: r.take(length) });
  }
  return files;
}

export function parseCrashArchive(bytes: Buffer): CrashArchive {
  if (bytes.length >= CR1_MAGIC.length && bytes.subarray(0, CR1_MAGIC.length).equals(CR1_MAGIC)) {
    const r = new Reader(bytes);
    r.offset = CR1_MAGIC.length;
    const header = readHeader(r);
    checkFileCount(header.fileCount, r.left);
    const files = readEntries(r, header.fileCount);
    if (r.left !== 0) throw new CrashPoison('trailing-bytes', `${r.left} bytes after the last file`);
    return { layout: 'ue5', directoryName: header.directoryName, fileName: header.fileName, uncompressedSize: header.uncompressedSize, files };
  }

  // Legacy: the real FileCount is the last four bytes; the header at the start is a placeholder.
  if (bytes.length < 4) throw new CrashPoison('truncated', `${bytes.length} bytes is not an archive`);
  const fileCount = bytes.readInt32LE(bytes.length - 4);
  checkFileCount(fileCount, bytes.length);
  const r = new Reader(bytes);
  readHeader(r);
  const files = readEntries(r, fileCount);
  const header = readHeader(r);
  if (r.left !== 0) throw new CrashPoison('trailing-bytes', `${r.left} bytes after the closing header`);
  // Cannot differ (both are the last four bytes once nothing trails); kept as the format's statement.
  if (header.fileCount !== fileCount) throw new CrashPoison('too-many-files', `the closing header says ${header.fileCount} files, ${fileCount} were read`);
  return { layout: 'ue4', directoryName: header.directoryName, fileName: header.fileName, uncompressedSize: header.uncompressedSize, files };
}

export type FileKind = 'context' | 'minidump' | 'apple-crash-report' | 'log' | 'config' | 'other';

export const CONTEXT_FILE_NAME = 'CrashContext.runtime-xml';

/** What a file is, by name for the context, logs and ini files, by its first bytes for dumps. */
export function classifyFile(file: ArchiveFile): FileKind {
  const base = baseName(file.name).toLowerCase();
  if (base === CONTEXT_FILE_NAME.toLowerCase()) return 'context';
  if (file.data.subarray(0, 4).toString('latin1') === 'MDMP') return 'minidump';
  if (file.data.subarray(0, 20).toString('latin1') === 'Incident Identifier:') return 'apple-crash-report';
  if (base.endsWith('.log')) return 'log';
  if (base.endsWith('.ini')) return 'config';
  return 'other';
}

/** The last part of a path written with either separator. */
export function baseName(name: string): string {
  const parts = name.split(/[\\/]/);
  return parts[parts.length - 1];
}
