import type { Knex } from 'knex';

/**
 * A player's store account (wallet currency) and entitlements are kept in each API process's memory
 * for the catalog (docs/commerce.md "The catalog from memory"). Every change to them NOTIFYs the
 * player's id on `hearth_commerce_player_changed`, from a trigger, so no writer (the routes, the
 * report job in the worker fleet, a person with psql) can change them unheard: PostgreSQL delivers
 * the notice at commit to every process's content watch, with or without Redis.
 * An acknowledgement (`acknowledged_at`) changes nothing the catalog shows, so it does not notify.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION hearth_commerce_player_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- PostgreSQL sends one notice per distinct payload per transaction, at commit.
      PERFORM pg_notify('hearth_commerce_player_changed', CASE WHEN TG_OP = 'DELETE' THEN OLD.player_id ELSE NEW.player_id END);
      RETURN NULL;
    END $$;
    CREATE TRIGGER commerce_store_accounts_notify AFTER INSERT OR UPDATE OR DELETE ON commerce_store_accounts
      FOR EACH ROW EXECUTE FUNCTION hearth_commerce_player_changed();
    CREATE TRIGGER commerce_entitlements_notify AFTER INSERT OR DELETE OR UPDATE OF status, key, player_id ON commerce_entitlements
      FOR EACH ROW EXECUTE FUNCTION hearth_commerce_player_changed();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER commerce_entitlements_notify ON commerce_entitlements;
    DROP TRIGGER commerce_store_accounts_notify ON commerce_store_accounts;
    DROP FUNCTION hearth_commerce_player_changed();
  `);
}
