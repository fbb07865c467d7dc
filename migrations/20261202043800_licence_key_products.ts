import type { Knex } from 'knex';

/**
 * The products a licence key covers (docs/licence.md "Products"): a machine activates, and a seat's
 * token is issued, only for a product the presenting key names. Stored per key, as the key's
 * `hearth licence-keys create --product` or its LicenceKey document's `spec.products` says.
 *
 * A key made before this covers, from now on, the products its organisation's seats already hold
 * (what its plugins have been activating), so the plugins in use keep their seats; a key whose
 * organisation holds no seat covers nothing until it is given products (its LicenceKey document
 * applied again with `spec.products`, or a new key minted with `--product`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE licence_keys ADD COLUMN products text[] NOT NULL DEFAULT '{}';
    UPDATE licence_keys k
       SET products = held.products
      FROM (SELECT project_id, array_agg(DISTINCT product ORDER BY product) AS products FROM licence_seats GROUP BY project_id) held
     WHERE held.project_id = k.project_id AND k.revoked_at IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE licence_keys DROP COLUMN products');
}
