/**
 * The test client holds every answer it receives to the API's own OpenAPI document, so the whole
 * suite checks, as it runs, that the document describes what the routes really answer:
 * - the status must be documented for the operation;
 * - a documented JSON body must be there and match its schema exactly (the document's answers are open
 *   to fields v1 may add; here every object is closed, so an undocumented field is caught);
 * - a refusal's code must be one the answer lists (x-hearth-error-codes);
 *   an answer documented without a body must have none;
 * - every header the answer is documented to carry (`required`: X-RateLimit-*, Retry-After, ETag)
 *   must be there and match its schema.
 *
 * The document is the one GET /openapi.json serves, built here from the same route table by the same
 * function (test/api/openapi.test.ts checks that the two are equal), so checking costs no request
 * that a rate-limit test would count. Schemas are compiled once per test file (jest gives every file
 * its own modules), each the first time an answer needs it.
 *
 * Not checked, and said so on the reply (`reply.contract.reason`): routes a test declares itself
 * (extraRoutes, told by the harness) and requests no operation of the document takes (outside
 * /v1, unknown paths, a method a path does not take).
 *
 * With HEARTH_CONTRACT_LOG=<file>, each checked answer appends `<operationId> <status>` to the file:
 * which operations and answers a run of the suite held to the document.
 */
import { appendFileSync } from 'node:fs';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import { BASE_PATH, ERROR_CODES_EXTENSION, buildOpenApi, routeTable, type AnyRoute } from '@hearth/api';
import { withoutTrailingSlashes } from '@hearth/core/net';

export type ContractCheck = { checked: true; operationId: string } | { checked: false; reason: string };

/** An answer the document does not describe. */
export class ContractViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractViolation';
  }
}

/** What the checker needs of an answer, whichever client got it. */
export interface Answer {
  method: string;
  /** The whole URL asked. */
  url: string;
  status: number;
  header(name: string): string | null;
  /** The body as received ('' for none). */
  text: string;
}

type Json = Record<string, any>;
type Router = ReturnType<typeof FindMyWay<HTTPVersion.V1>>;

const DOCUMENT_ID = 'openapi.json';

/** `/players/{playerId}` → `/players/:playerId`, as the API's router has it. */
function routerPath(documentPath: string): string {
  return documentPath.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function noHandler(): void {}

export class Contract {
  private readonly ajv = new Ajv2020({ strict: true, allErrors: true });
  private readonly operations: Router = FindMyWay<HTTPVersion.V1>({ maxParamLength: 16 * 1024 });
  private readonly testRoutes: Router = FindMyWay<HTTPVersion.V1>({ maxParamLength: 16 * 1024 });
  private readonly declared = new Set<string>();
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly document: Json) {
    addFormats(this.ajv);
    // The component schemas under an id of their own, where the document's refs to them are sent (validator()).
    this.ajv.addSchema({ $id: DOCUMENT_ID, $defs: closed(toDefs(this.document.components.schemas)) });
    for (const [path, operations] of Object.entries(this.document.paths as Record<string, Record<string, Json>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        this.operations.on(method.toUpperCase() as 'GET', BASE_PATH + routerPath(path), noHandler, { path, method, operation });
      }
    }
  }

  declareTestRoutes(routes: AnyRoute[]): void {
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      if (this.declared.has(key)) continue;
      this.declared.add(key);
      this.testRoutes.on(route.method, BASE_PATH + route.path, noHandler);
    }
  }

  check(answer: Answer): ContractCheck {
    const method = answer.method.toUpperCase() === 'HEAD' ? 'GET' : answer.method.toUpperCase();
    const path = withoutTrailingSlashes(new URL(answer.url).pathname);
    if (!path.startsWith(`${BASE_PATH}/`)) return { checked: false, reason: `${path} is outside ${BASE_PATH}` };
    if (find(this.testRoutes, method, path)) return { checked: false, reason: `${method} ${path} is a route the test declares (extraRoutes)` };
    const found = find(this.operations, method, path);
    if (!found) return { checked: false, reason: `no operation of the document takes ${method} ${path}` };
    const { operation, path: documentPath } = found.store as { operation: Json; path: string; method: string };
    const where = `${answer.method} ${path} (${operation.operationId}) answered ${answer.status}`;

    const response: Json | undefined = operation.responses[String(answer.status)];
    if (!response) {
      throw new ContractViolation(
        `${where}, a status the document does not list for it (it lists ${Object.keys(operation.responses).join(', ')}): ${answer.text.slice(0, 300)}`,
      );
    }

    for (const [name, declared] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const header = this.deref(declared);
      if (!header.required) continue;
      const value = answer.header(name);
      if (value === null) throw new ContractViolation(`${where} without the header ${name} the document says it carries`);
      const validate = this.validator(`header ${name} ${JSON.stringify(header.schema)}`, header.schema);
      const typed = header.schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
      if (!validate(typed)) throw new ContractViolation(`${where} with ${name}: ${value}, which does not match ${JSON.stringify(header.schema)}`);
    }

    const schema: Json | undefined = response.content?.['application/json']?.schema;
    if (answer.method.toUpperCase() === 'HEAD') return { checked: true, operationId: operation.operationId };
    if (!schema) {
      if (answer.text !== '') throw new ContractViolation(`${where} with a body, where the document says none: ${answer.text.slice(0, 300)}`);
      return { checked: true, operationId: operation.operationId };
    }
    const contentType = answer.header('content-type') ?? '';
    if (!/^application\/json\b/.test(contentType)) throw new ContractViolation(`${where} with Content-Type ${contentType || '(none)'}, not JSON`);
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      throw new ContractViolation(`${where} with a body that is not JSON: ${answer.text.slice(0, 300)}`);
    }
    const validate = this.validator(`${operation.operationId} ${answer.status} ${documentPath}`, schema);
    if (!validate(body)) {
      throw new ContractViolation(
        `${where} with a body its documented schema refuses: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}\n  body: ${answer.text.slice(0, 500)}`,
      );
    }
    const codes: string[] | undefined = response[ERROR_CODES_EXTENSION];
    if (answer.status >= 400 && !codes?.includes((body as { error?: string }).error ?? '')) {
      throw new ContractViolation(
        `${where} with the code ${(body as { error?: string }).error}, which the document does not list for it (${codes?.join(', ')})`,
      );
    }
    return { checked: true, operationId: operation.operationId };
  }

  /** Follows a `#/components/...` ref of the document. */
  private deref(node: Json): Json {
    if (typeof node.$ref !== 'string') return node;
    return (node.$ref as string)
      .slice(2)
      .split('/')
      .reduce((at: Json, part) => at[part], this.document);
  }

  private validator(key: string, schema: Json): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      const resolved = toDefs(schema);
      validate = this.ajv.compile(closed(resolved));
      this.validators.set(key, validate);
    }
    return validate;
  }
}

/**
 * The document's answers are open to fields v1 may add; Hearth's own answers must carry exactly the
 * documented ones: every object that lists its properties and says nothing of others is closed here.
 */
function closed(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema), (_key, value) =>
    value && typeof value === 'object' && !Array.isArray(value) && value.type === 'object' && value.properties && !('additionalProperties' in value)
      ? { ...value, additionalProperties: false }
      : value,
  );
}

/** The document's refs to its named schemas, as refs to the $defs of the schema they are added under. */
function toDefs(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema).replace(/"#\/components\/schemas\//g, `"${DOCUMENT_ID}#/$defs/`));
}

/** As the API's router finds a route: a path whose escapes cannot be decoded still finds its operation. */
function find(router: Router, method: string, path: string) {
  return router.find(method as 'GET', path) ?? (path.includes('%') ? router.find(method as 'GET', path.replace(/%/g, '%25')) : null);
}

let contract: Contract | undefined;
function theContract(): Contract {
  return (contract ??= new Contract(buildOpenApi(routeTable())));
}

/** Checks one answer against the document; throws a ContractViolation when the document does not describe it. */
export function checkAnswer(answer: Answer): ContractCheck {
  const checked = theContract().check(answer);
  const log = process.env.HEARTH_CONTRACT_LOG;
  if (log && checked.checked) appendFileSync(log, `${checked.operationId} ${answer.status}\n`);
  return checked;
}

/** Routes a test adds to its API: their answers are the test's business, not the document's. */
export function declareTestRoutes(routes: AnyRoute[]): void {
  if (routes.length > 0) theContract().declareTestRoutes(routes);
}

/** The document the answers are held to. */
export function contractDocument(): Json {
  return theContract().document;
}
