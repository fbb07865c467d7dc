import { Refusal } from '../errors';
import type { ServiceName } from '../contract/resources';
import type { EnvironmentContext } from './environments';

const REVIEW_WORDS: Record<string, string> = { pending: 'awaiting review', rejected: 'not approved', suspended: 'suspended' };

/**
 * Whether a request may act in `env` (spec §4): the project is approved and, when the request needs
 * a service, the project has switched it on. The one place both the API's pipeline and the sessions
 * socket ask; null when the request may go on.
 */
export function environmentRefusal(env: EnvironmentContext, service?: ServiceName): Refusal | null {
  if (env.project.review !== 'approved') {
    return new Refusal('project-not-approved', `This project is ${REVIEW_WORDS[env.project.review] ?? env.project.review}.`);
  }
  if (service && !env.services[service]) {
    return new Refusal('service-disabled', `The ${service} service is not switched on for this project.`);
  }
  return null;
}
