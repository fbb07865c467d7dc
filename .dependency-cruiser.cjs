/**
 * The layers of apps/core/src (docs/architecture.md "Layers"), bottom to top; an import may only run
 * down or sideways within a layer, never back up. `make lint` runs these rules over the whole of core,
 * type-only imports included (a type is a dependency too).
 */
const CORE = '^apps/core/src/';
const CONTRACT = `${CORE}(contract|shapes)/`;
const INFRASTRUCTURE = `${CORE}((db|coord|storage|net|process)/|(ids|logger|config|clock|cache|pagination|errors|canonical-json|validation|idempotency|invalidation|sealing)[.]ts$)`;
const DOMAIN = `${CORE}(auth|tenancy|licence|players|content|sessions|saves|legal|tours|blog|support|crashes|economy|items|cards|progression|stats|dashboards|commerce)/`;
const MANIFESTS = `${CORE}manifests/`;
const ENTRY = `${CORE}(hearth|index)[.]ts$`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-module-has-a-layer',
      comment: 'Every module of apps/core/src belongs to one layer: name a new folder or top-level file in the layers above.',
      severity: 'error',
      from: { path: CORE, pathNot: [CONTRACT, INFRASTRUCTURE, DOMAIN, MANIFESTS, ENTRY] },
      to: {},
    },
    {
      name: 'contract-imports-nothing-of-core',
      comment: "contract/ (and shapes/) are the contract's values: service names, limits, grammars, spec schemas. They import no other part of core.",
      severity: 'error',
      from: { path: CONTRACT },
      to: { path: CORE, pathNot: CONTRACT },
    },
    {
      name: 'infrastructure-imports-no-area',
      comment: 'db, coord, storage, net, process and the shared top-level modules serve every area and know none.',
      severity: 'error',
      from: { path: INFRASTRUCTURE },
      to: { path: [DOMAIN, MANIFESTS, ENTRY] },
    },
    {
      name: 'domain-imports-no-manifest',
      comment: 'The manifest kinds and reconcilers sit above the domain: an area takes what it needs from contract/.',
      severity: 'error',
      from: { path: DOMAIN },
      to: { path: [MANIFESTS, ENTRY] },
    },
    {
      name: 'manifests-below-the-entry',
      comment: 'hearth.ts wires the services of a process and index.ts exports core: nothing in core imports them.',
      severity: 'error',
      from: { path: [MANIFESTS, DOMAIN, INFRASTRUCTURE, CONTRACT] },
      to: { path: ENTRY },
    },
    {
      name: 'a-kind-imports-no-list-of-kinds',
      comment:
        "A kind's declaration (manifests/kinds/<area>.ts) and what it is made of (kind.ts, reconciler.ts, manifest-error.ts) import no other module of manifests/: the list of kinds (schemas.ts) imports every kind, and what validates or applies documents imports the list.",
      severity: 'error',
      from: { path: `${MANIFESTS}(kinds/|(kind|reconciler|manifest-error)[.]ts$)` },
      to: { path: `${MANIFESTS}(?!(kind|reconciler|manifest-error)[.]ts$)` },
    },
    {
      name: 'no-circular',
      comment: 'A cycle hides which module is the lower one.',
      severity: 'error',
      from: { path: CORE },
      to: { circular: true },
    },
    {
      name: 'core-knows-no-process',
      comment: 'Core is the domain of every process: it never imports the API, the socket server, the CLI, the workers or the operator.',
      severity: 'error',
      from: { path: CORE },
      to: { path: '^(apps/(api|realtime|cli|crash-worker)|operator)/' },
    },
    {
      name: 'core-knows-no-http-layer',
      comment: 'HTTP routing and the socket library belong to apps/api and apps/realtime.',
      severity: 'error',
      from: { path: CORE },
      to: { path: 'node_modules/(ws|find-my-way|raw-body|koa)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
