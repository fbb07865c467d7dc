import type { Knex } from 'knex';

/**
 * The store's publisher key of a Project whose `spec.store.publisherKey.secretRef` names a Secret of
 * its namespace: the operator reads the Secret and keeps the key here sealed to the API processes'
 * public key (tenancy/project-secrets.ts, as the dashboard client secret), with where it came from
 * (the Secret's uid, resourceVersion and key, and the key it was sealed to). Any namespace: a pod
 * could mount Secrets of its own only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE projects ADD COLUMN store_publisher_key text, ADD COLUMN store_publisher_key_origin text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE projects DROP COLUMN store_publisher_key, DROP COLUMN store_publisher_key_origin');
}
