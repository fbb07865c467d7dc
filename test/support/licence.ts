/**
 * A client plugin's offline check of a licence token, exactly as docs/licence.md "What a plugin
 * checks" writes it: the tests verify tokens the way a plugin built by that page does, so a token
 * another organisation's key obtained is shown to be refused by the documented check itself.
 */
import { type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';

/** What a plugin is built with: its organisation's audience and its own product name. */
export interface PluginBuild {
  audience: string;
  product: string;
}

/** The documented check: answers the payload, or throws (jose's errors, or one of its own for `type`/`product`). */
export async function verifyAsPlugin(token: string, keys: JWTVerifyGetKey, build: PluginBuild, machineId: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, keys, {
    algorithms: ['EdDSA'],
    typ: 'licence+jwt',
    audience: build.audience,
    subject: machineId,
    requiredClaims: ['exp', 'type', 'product'],
  });
  if (payload.type !== 'licence') throw new Error('not a licence token');
  if (payload.product !== build.product) throw new Error(`a licence for product "${String(payload.product)}", not "${build.product}"`);
  return payload;
}
