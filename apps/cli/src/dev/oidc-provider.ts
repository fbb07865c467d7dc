/**
 * A local OpenID Connect provider: a real oidc-provider in its own process (oidc-provider-server.mjs
 * beside this file), for `hearth dev`'s demo dashboard and the custom-dashboard tests
 * (test/support/oidc-provider.ts re-exports this one); and what a dashboard's browser does to get an
 * authorization code from it (the authorization request with PKCE and a nonce, the provider's
 * redirects with their cookies), done with fetch.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const SCRIPT = path.join(__dirname, 'oidc-provider-server.mjs');

/**
 * Whether the provider can run here: its script beside this file (a checkout; the image has no
 * sources) and the oidc-provider package it imports (an optional dependency of the command, which an
 * install without optional packages, such as the image's, leaves out).
 */
export function localProviderAvailable(): boolean {
  if (!fs.existsSync(SCRIPT)) return false;
  try {
    createRequire(SCRIPT).resolve('oidc-provider');
    return true;
  } catch {
    return false;
  }
}

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

/** A person the provider knows: the claims it asserts, and the password its sign-in form takes (none: only `login_hint` signs them in). */
export interface ProviderAccount extends PersonClaims {
  password?: string;
}

/** What a dashboard keeps between its redirect to the provider and POST /auth/dashboard. */
export interface AuthorizationCode {
  code: string;
  codeVerifier: string;
  nonce: string;
}

export class OidcProviderStandIn {
  private constructor(
    private readonly child: ChildProcess,
    readonly issuer: string,
  ) {}

  /**
   * Starts the provider on 127.0.0.1 at `options.port` (0, the default: one the kernel picks), knowing
   * `clients` and `options.accounts` (user name → account). Answers once it listens.
   */
  static async start(clients: OidcClient[], options: { port?: number; accounts?: Record<string, ProviderAccount> } = {}): Promise<OidcProviderStandIn> {
    const settings = {
      clients: clients.map((c) => ({ grant_types: ['authorization_code'], response_types: ['code'], ...c })),
      port: options.port ?? 0,
      accounts: options.accounts ?? {},
    };
    // stdin stays open: the provider ends when this process does, however it ends.
    const child = spawn(process.execPath, ['--no-warnings', SCRIPT, JSON.stringify(settings)], { stdio: ['pipe', 'pipe', 'pipe'] });
    const { stdout, stderr } = child;
    const issuer = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const newline = out.indexOf('\n');
        if (newline >= 0) resolve((JSON.parse(out.slice(0, newline)) as { issuer: string }).issuer);
      });
      stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4096)));
      child.on('error', reject);
      child.on('exit', (code) => reject(new Error(`the OpenID Connect provider exited with ${code}: ${err.trim()}`)));
    });
    return new OidcProviderStandIn(child, issuer);
  }

  /** Stops the provider: SIGTERM, then SIGKILL after 5 s; resolves once it has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
  }

  /** The people the provider knows, by user name (the `sub` it asserts), with the claims it asserts about them. */
  async setAccounts(accounts: Record<string, ProviderAccount>): Promise<void> {
    const answer = await fetch(`${this.issuer}/dev/accounts`, { method: 'POST', body: JSON.stringify(accounts) });
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
        const [pair = ''] = set.split(';');
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
