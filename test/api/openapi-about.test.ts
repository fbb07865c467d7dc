/**
 * The OpenAPI document's contact and licence are the deployment's (HEARTH_API_CONTACT,
 * HEARTH_API_LICENSE; docs/api-conventions.md "The OpenAPI document"): what each form gives, the
 * default that names them as the operator's, and every malformed value refused with its variable.
 */
import { ConfigError, DEFAULT_API_ABOUT, loadConfig } from '@hearth/core';
import { routeTable } from '@hearth/api';

const aboutOf = (env: Record<string, string>) => loadConfig(env).apiDocument;
/** The `info` GET /openapi.json answers, from the route table the API process builds with its configuration. */
async function infoOf(env: Record<string, string>): Promise<unknown> {
  const route = routeTable([], aboutOf(env)).find((r) => r.operationId === 'getOpenApi')!;
  const answer = (await route.handler({} as never)) as { body: { info: unknown } };
  return answer.body.info;
}

describe('HEARTH_API_CONTACT and HEARTH_API_LICENSE', () => {
  test('unset: the document names the deployment operators and their terms, with an SPDX reference (the linters want one)', async () => {
    expect(await infoOf({})).toMatchObject({
      contact: { name: 'the operators of this deployment' },
      license: { name: "this deployment's terms", identifier: 'LicenseRef-Deployment-Terms' },
    });
    expect(aboutOf({ HEARTH_API_CONTACT: '', HEARTH_API_LICENSE: '' })).toEqual(DEFAULT_API_ABOUT);
  });

  test('an https contact, a mailto contact, an SPDX expression and an https terms URL', async () => {
    expect(await infoOf({ HEARTH_API_CONTACT: 'https://support.example.com/api', HEARTH_API_LICENSE: 'Apache-2.0' })).toEqual(
      expect.objectContaining({
        contact: { name: 'support.example.com', url: 'https://support.example.com/api' },
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      }),
    );
    expect(aboutOf({ HEARTH_API_CONTACT: 'mailto:api@studio.example', HEARTH_API_LICENSE: 'https://studio.example/terms' })).toEqual({
      contact: { name: 'api@studio.example', email: 'api@studio.example' },
      license: { name: 'terms', url: 'https://studio.example/terms' },
    });
    expect(aboutOf({ HEARTH_API_LICENSE: '(MIT OR Apache-2.0)' }).license.identifier).toBe('(MIT OR Apache-2.0)');
    expect(aboutOf({ HEARTH_API_LICENSE: 'LicenseRef-Acme-Terms' }).license.identifier).toBe('LicenseRef-Acme-Terms');
  });

  test.each([
    ['HEARTH_API_CONTACT', 'http://support.example.com', /must start with https:/],
    ['HEARTH_API_CONTACT', 'support@example.com', /is not a URL/],
    ['HEARTH_API_CONTACT', 'mailto:nobody', /is not a mailto: address/],
    ['HEARTH_API_LICENSE', 'Apache 2.0; drop', /neither an SPDX expression/],
    ['HEARTH_API_LICENSE', 'http://studio.example/terms', /neither an SPDX expression/],
    ['HEARTH_API_LICENSE', 'https://', /is not a URL/],
  ])('%s=%p stops the process with a line naming it', (variable, value, reason) => {
    let error: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as ConfigError).message).toMatch(reason);
  });
});
