/**
 * A project's store settings (`spec.store` of a Project): which PC game store it sells through and how
 * the backend speaks to that store's partner web API (docs/commerce.md). The publisher key is never
 * written here: the settings name where it is (a Secret of the project's namespace, a file, or an
 * environment variable of the API process), and the process reads it from there when it calls the store.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Defaulted, literals } from './fields';
import { ResourceName } from './names';

/** The store providers Hearth speaks to; the one of today is the Steam partner web API. */
export const STORE_PROVIDERS = ['steam'] as const;
export type StoreProvider = (typeof STORE_PROVIDERS)[number];

const SecretKeyName = Type.String({ minLength: 1, maxLength: 253, pattern: '^[-._a-zA-Z0-9]+$', description: 'the entry of the Secret that holds the key' });

export const PublisherKeySource = Type.Union(
  [
    Type.Object(
      {
        secretRef: Type.Object(
          { name: { ...ResourceName, description: "a Secret of the Project's namespace" }, key: SecretKeyName },
          { additionalProperties: false, description: "a Secret of the Project's namespace, carried to the API sealed by the operator (docs/commerce.md)" },
        ),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      { file: Type.String({ minLength: 1, maxLength: 4096, pattern: '^/', description: 'an absolute path, read by the API process (outside Kubernetes)' }) },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        env: Type.String({
          minLength: 1,
          maxLength: 128,
          pattern: '^[A-Z_][A-Z0-9_]*$',
          description: 'an environment variable of the API process (outside Kubernetes)',
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'where the publisher web API key is; never the key itself' },
);
export type PublisherKeySourceT = Static<typeof PublisherKeySource>;

export const StoreSpec = Type.Object(
  {
    provider: literals(STORE_PROVIDERS, { description: 'the store: `steam` (its partner web API)' }),
    appId: Type.Integer({ minimum: 1, maximum: 4294967295, description: "the game's app id at the store" }),
    sandbox: Defaulted(Type.Boolean({ default: false, description: "true: microtransactions go to the store's sandbox interface (no money moves)" })),
    identity: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[\\x21-\\x7e]+$',
      description: 'the fixed identity string the game passes to GetAuthTicketForWebApi and identify sends back',
    }),
    publisherKey: PublisherKeySource,
    baseUrl: Type.Optional(
      Type.String({
        pattern: '^https?://[^?#]+$',
        maxLength: 2048,
        description: "a local or staging store's address (hearth dev's local store, a test's) instead of the store's own; production leaves it out",
      }),
    ),
  },
  { additionalProperties: false, description: 'the store this project sells through (docs/commerce.md)' },
);
export type StoreSpecT = Static<typeof StoreSpec>;

/** The store's own address (its partner web API). */
export const STORE_BASE_URL = 'https://partner.steam-api.com';
