// A real OpenID Connect provider (the oidc-provider package) for the custom-dashboard sign-in tests,
// run as its own process (the package is ESM only): test/support/oidc-provider.ts starts it and
// drives it. Its interactions sign in whoever the authorization request names in `login_hint`, so no
// browser is needed; the people it knows are set over POST /test/accounts.
import http from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const settings = JSON.parse(process.argv[2]);
const accounts = new Map();
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: settings.clients,
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'test-key', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: ['hearth-test-cookies'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // The id token carries what its scopes ask (email), as most organisations' providers do.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    ttl: { AuthorizationCode: 60, IdToken: 3600, AccessToken: 3600, Interaction: 600, Session: 600, Grant: 600 },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (ctx, id) => {
      const claims = accounts.get(id);
      return claims ? { accountId: id, claims: () => ({ sub: id, ...claims }) } : undefined;
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
  server.on('request', async (req, res) => {
    try {
      if (req.method === 'POST' && req.url === '/test/accounts') {
        let body = '';
        for await (const chunk of req) body += chunk;
        for (const [id, claims] of Object.entries(JSON.parse(body))) accounts.set(id, claims);
        res.writeHead(204).end();
      } else if (req.url.startsWith('/interaction/')) {
        const details = await provider.interactionDetails(req, res);
        await provider.interactionFinished(req, res, { login: { accountId: details.params.login_hint } }, { mergeWithLastSubmission: false });
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
