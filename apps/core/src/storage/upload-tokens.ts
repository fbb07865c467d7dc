/**
 * The embedded default's presigned PUTs: the API itself serves the upload URL, and the URL carries
 * a token naming what may be uploaded (key, exact size, SHA-256) and until when, MACed with a key
 * derived from the master key, so it cannot be made, edited or extended by its holder.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface UploadGrant {
  key: string;
  sizeBytes: number;
  /** 64 lower-case hex digits. */
  sha256: string;
  /** Unix seconds. */
  expiresAt: number;
}

export type UploadTokenCheck = { ok: true; grant: UploadGrant } | { ok: false; reason: 'tampered' | 'expired' };

const MAC_BYTES = 32;

export class UploadTokens {
  constructor(private readonly key: Buffer) {}

  issue(grant: UploadGrant): string {
    const body = Buffer.from(JSON.stringify([grant.key, grant.sizeBytes, grant.sha256, grant.expiresAt])).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  check(token: string, now = Date.now()): UploadTokenCheck {
    const dot = token.indexOf('.');
    if (dot <= 0) return { ok: false, reason: 'tampered' };
    const body = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    if (given.length !== MAC_BYTES || !timingSafeEqual(given, this.mac(body))) return { ok: false, reason: 'tampered' };
    let grant: UploadGrant;
    try {
      const [key, sizeBytes, sha256, expiresAt] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as [string, number, string, number];
      grant = { key, sizeBytes, sha256, expiresAt };
    } catch {
      return { ok: false, reason: 'tampered' };
    }
    if (now >= grant.expiresAt * 1000) return { ok: false, reason: 'expired' };
    return { ok: true, grant };
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.key).update('object-upload\u0000').update(body).digest();
  }
}
