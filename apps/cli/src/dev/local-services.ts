/**
 * The outside services `hearth dev` runs beside the API, on 127.0.0.1, so that every feature of the
 * demo project can be tried on a laptop: a local store speaking the store's partner web API
 * (store.ts) and a local OpenID Connect provider with a few accounts (oidc-provider.ts).
 * examples/dev/ names them at their default addresses; `pointAtLocalServices` moves those addresses
 * to where they listen (HEARTH_DEV_STORE_PORT, HEARTH_DEV_OIDC_PORT).
 */
import type { LoadedManifest } from '@hearth/core/manifests';
import type { DevServices } from '../dev-connection';
import { OidcProviderStandIn, type ProviderAccount, localProviderAvailable } from './oidc-provider';
import { StoreStandIn } from './store';

/** Where examples/dev/ says the local store and the local provider are (their default ports). */
export const DEFAULT_STORE_PORT = 8091;
export const DEFAULT_OIDC_PORT = 8092;
const DEFAULT_STORE_URL = `http://127.0.0.1:${DEFAULT_STORE_PORT}`;
const DEFAULT_ISSUER = `http://127.0.0.1:${DEFAULT_OIDC_PORT}`;

/** The publisher key the local store takes when HEARTH_DEV_STORE_KEY is unset (the demo project reads its key from that variable). */
export const LOCAL_STORE_KEY = 'hearth-dev-local-store-key';
/** The dashboard client the local provider knows (public: PKCE, no secret), as the demo project names it. */
export const DEV_DASHBOARD_CLIENT_ID = 'hearth-dashboard';
/** The password of every demo account at the provider's sign-in form. */
export const DEV_PASSWORD = 'hearth';

/** The people of the local provider, by user name (its `sub`); examples/dev/50-dashboards.yaml makes two of them members. */
const DEV_ACCOUNTS: Record<string, ProviderAccount & { email: string }> = {
  ada: { email: 'ada@studio.example', email_verified: true, password: DEV_PASSWORD },
  bob: { email: 'bob@studio.example', email_verified: true, password: DEV_PASSWORD },
  eve: { email: 'eve@studio.example', email_verified: true, password: DEV_PASSWORD },
};

export interface LocalServices {
  store: StoreStandIn;
  /** None where it cannot run (`localProviderAvailable`: no sources, or no oidc-provider package). */
  provider: OidcProviderStandIn | null;
  /** What connection.json and the start-up lines say of them. */
  describe(docs: LoadedManifest[], baseUrl: string): DevServices;
  stop(): Promise<void>;
}

/** Starts the local store (taking `storeKey`) and the local provider; either failing stops the other. */
export async function startLocalServices(options: { storePort: number; providerPort: number; storeKey: string }): Promise<LocalServices> {
  const store = await new StoreStandIn([options.storeKey]).start(options.storePort);
  let provider: OidcProviderStandIn | null = null;
  if (localProviderAvailable()) {
    try {
      const issuer = `http://127.0.0.1:${options.providerPort}`;
      provider = await OidcProviderStandIn.start(
        [{ client_id: DEV_DASHBOARD_CLIENT_ID, redirect_uris: [`${issuer}/callback`], token_endpoint_auth_method: 'none' }],
        { port: options.providerPort, accounts: DEV_ACCOUNTS },
      );
    } catch (err) {
      await store.stop();
      throw err;
    }
  }
  return {
    store,
    provider,
    describe: (docs, baseUrl) => ({
      baseUrl,
      store: { url: store.url },
      provider: provider && {
        issuer: provider.issuer,
        clientId: DEV_DASHBOARD_CLIENT_ID,
        redirectUri: `${provider.issuer}/callback`,
        accounts: Object.entries(DEV_ACCOUNTS).map(([user, account]) => ({
          user,
          password: DEV_PASSWORD,
          email: account.email,
          member: membership(docs, user, account.email),
        })),
      },
    }),
    stop: async () => {
      await store.stop();
      await provider?.stop();
    },
  };
}

/**
 * The documents with the default addresses of the local services (a Project's `store.baseUrl`, its
 * `dashboard.issuer` and `redirectUri`) moved to where they listen; the local store's tickets are
 * for the app and identity string of the Project that sells through it.
 */
export function pointAtLocalServices(docs: LoadedManifest[], services: LocalServices): LoadedManifest[] {
  const moved = (value: string | undefined, from: string, to: string) =>
    value !== undefined && (value === from || value.startsWith(`${from}/`)) ? to + value.slice(from.length) : value;
  return docs.map((loaded) => {
    if (loaded.doc.kind !== 'Project') return loaded;
    const spec = { ...(loaded.doc.spec as Record<string, unknown>) };
    const store = spec.store as { baseUrl?: string; appId: number; identity: string } | undefined;
    if (store?.baseUrl !== undefined && moved(store.baseUrl, DEFAULT_STORE_URL, services.store.url) !== store.baseUrl) {
      spec.store = { ...store, baseUrl: moved(store.baseUrl, DEFAULT_STORE_URL, services.store.url) };
      services.store.ticketDefaults = { appid: store.appId, identity: store.identity };
    }
    const dashboard = spec.dashboard as { issuer: string; redirectUri: string } | undefined;
    const issuer = services.provider?.issuer;
    if (dashboard && issuer) {
      spec.dashboard = {
        ...dashboard,
        issuer: moved(dashboard.issuer, DEFAULT_ISSUER, issuer),
        redirectUri: moved(dashboard.redirectUri, DEFAULT_ISSUER, issuer),
      };
    }
    return { ...loaded, doc: { ...loaded.doc, spec } as typeof loaded.doc };
  });
}

/** What a demo account may do, from the DashboardMember documents naming its user name or e-mail. */
function membership(docs: LoadedManifest[], user: string, email: string): string {
  for (const { doc } of docs) {
    if (doc.kind !== 'DashboardMember') continue;
    const spec = doc.spec as { subject?: string; email?: string; disabled?: boolean; environments: { environment: string; permissions: string[] }[] };
    if (spec.subject !== user && spec.email?.toLowerCase() !== email) continue;
    if (spec.disabled) return 'a closed member';
    return spec.environments.map((e) => `${e.permissions.join(', ')} in ${e.environment}`).join('; ');
  }
  return 'no member (a sign-in is refused)';
}
