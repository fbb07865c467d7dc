// A real OpenID Connect provider (the oidc-provider package) on 127.0.0.1, run as its own process
// (the package is ESM only): apps/cli/src/dev/oidc-provider.ts starts it, for `hearth dev` (the demo
// project's dashboard sign-in) and for the custom-dashboard tests.
//
// Settings (JSON, the first argument): { clients, port, accounts }. `accounts` maps a user name (the
// `sub` the provider asserts) to its claims and an optional password; more are set over
// POST /dev/accounts. Signing in, at the authorization endpoint:
// - with `login_hint=<user name>`, that person is signed in at once, no password and no page (what
//   curl and the tests do: follow the redirects, keep the cookies);
// - without, the interaction page is a form asking a user name and password.
// GET /callback answers `{ code, state }` of the redirect it receives, as JSON: a redirect URI for a
// laptop with no dashboard to receive it.
import http from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const settings = JSON.parse(process.argv[2]);
/** user name → { claims, password? } */
const accounts = new Map();
function setAccounts(given) {
  for (const [id, { password, ...claims }] of Object.entries(given ?? {})) accounts.set(id, { claims, password });
}
setAccounts(settings.accounts);
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
function loginForm(res, uid, message) {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><title>Sign in</title><h1>Sign in (local OpenID Connect provider of hearth dev)</h1>
${message ? `<p>${escape(message)}</p>` : ''}<form method="post" action="/interaction/${escape(uid)}">
<label>User name <input name="login" autofocus></label> <label>Password <input name="password" type="password"></label>
<button>Sign in</button></form>`);
}

const server = http.createServer();
server.on('error', (err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
server.listen(settings.port ?? 0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: settings.clients,
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'local-key', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: ['hearth-local-provider-cookies'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // The id token carries what its scopes ask (email), as most organisations' providers do.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    ttl: { AuthorizationCode: 60, IdToken: 3600, AccessToken: 3600, Interaction: 600, Session: 600, Grant: 600 },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (ctx, id) => {
      const account = accounts.get(id);
      return account ? { accountId: id, claims: () => ({ sub: id, ...account.claims }) } : undefined;
    },
    // First-party clients: the person is not asked to consent to the scopes asked.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email');
      await grant.save();
      return grant;
    },
  });
  const serve = provider.callback();
  const finish = (req, res, accountId) => provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
  server.on('request', async (req, res) => {
    try {
      const url = new URL(req.url, issuer);
      if (req.method === 'POST' && url.pathname === '/dev/accounts') {
        let body = '';
        for await (const chunk of req) body += chunk;
        setAccounts(JSON.parse(body));
        res.writeHead(204).end();
      } else if (req.method === 'GET' && url.pathname === '/callback') {
        res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
        res.end(`${JSON.stringify(Object.fromEntries(url.searchParams))}\n`);
      } else if (url.pathname.startsWith('/interaction/')) {
        const details = await provider.interactionDetails(req, res);
        if (details.params.login_hint) return await finish(req, res, details.params.login_hint);
        if (req.method !== 'POST') return loginForm(res, details.uid);
        let body = '';
        for await (const chunk of req) body += chunk;
        const { login = '', password = '' } = Object.fromEntries(new URLSearchParams(body));
        const account = accounts.get(login);
        if (!account || account.password === undefined || account.password !== password)
          return loginForm(res, details.uid, 'Unknown user name or wrong password.');
        await finish(req, res, login);
      } else {
        serve(req, res);
      }
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
// The process that started it holds our stdin: once it is gone (killed, even with SIGKILL), so are we,
// and the port is free for the next `hearth dev`.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
