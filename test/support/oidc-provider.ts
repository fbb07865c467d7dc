/**
 * The stand-in for an organisation's OpenID Connect provider in the custom-dashboard tests: a real
 * oidc-provider in its own process (oidc-provider-server.mjs), and what a dashboard's browser would
 * do to get an authorization code from it (the authorization request with PKCE and a nonce, the
 * provider's redirects with their cookies), done with fetch.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { stopProcess } from './processes';

export interface OidcClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: 'client_secret_basic' | 'none';
  grant_types?: string[];
  response_types?: string[];
}

export interface PersonClaims {
  email?: string;
  email_verified?: boolean;
}

/** What a dashboard keeps between its redirect to the provider and POST /auth/dashboard. */
export interface AuthorizationCode {
  code: string;
  codeVerifier: string;
  nonce: string;
}

export class OidcProviderStandIn {
  private constructor(private readonly child: ChildProcess, readonly issuer: string) {}

  static async start(clients: OidcClient[]): Promise<OidcProviderStandIn> {
    const script = path.join(__dirname, 'oidc-provider-server.mjs');
    const child = spawn(process.execPath, ['--no-warnings', script, JSON.stringify({ clients: clients.map((c) => ({ grant_types: ['authorization_code'], response_types: ['code'], ...c })) })], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const issuer = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n')[0];
        if (out.includes('\n')) resolve((JSON.parse(line) as { issuer: string }).issuer);
      });
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      child.on('exit', (code) => reject(new Error(`the OpenID provider stand-in exited with ${code}: ${err}`)));
    });
    return new OidcProviderStandIn(child, issuer);
  }

  async stop(): Promise<void> {
    await stopProcess(this.child);
  }

  /** The people the provider knows, by subject, with the claims it asserts about them. */
  async setAccounts(accounts: Record<string, PersonClaims>): Promise<void> {
    const answer = await fetch(`${this.issuer}/test/accounts`, { method: 'POST', body: JSON.stringify(accounts) });
    if (answer.status !== 204) throw new Error(`setting the accounts answered ${answer.status}`);
  }

  /**
   * Signs `subject` in at the provider as a dashboard would send them there, and answers the code the
   * provider redirects back with, and the verifier and nonce the dashboard kept.
   */
  async authorize(options: { subject: string; clientId: string; redirectUri: string; nonce?: string; codeVerifier?: string }): Promise<AuthorizationCode> {
    const codeVerifier = options.codeVerifier ?? randomBytes(32).toString('base64url');
    const nonce = options.nonce ?? randomBytes(16).toString('base64url');
    const url = new URL(`${this.issuer}/auth`);
    url.search = new URLSearchParams({
      client_id: options.clientId,
      redirect_uri: options.redirectUri,
      response_type: 'code',
      scope: 'openid email',
      code_challenge: createHash('sha256').update(codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
      nonce,
      login_hint: options.subject,
    }).toString();
    const cookies = new Map<string, string>();
    let next = url.toString();
    for (let hop = 0; hop < 10; hop++) {
      const answer = await fetch(next, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      for (const set of answer.headers.getSetCookie()) {
        const [pair] = set.split(';');
        const eq = pair.indexOf('=');
        cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      const location = answer.headers.get('location');
      if (!location) throw new Error(`the provider answered ${answer.status} without a redirect: ${await answer.text()}`);
      const target = new URL(location, next);
      if (target.toString().startsWith(options.redirectUri)) {
        const code = target.searchParams.get('code');
        if (!code) throw new Error(`the provider redirected back without a code: ${target.toString()}`);
        return { code, codeVerifier, nonce };
      }
      next = target.toString();
    }
    throw new Error('the provider redirected too many times');
  }
}
