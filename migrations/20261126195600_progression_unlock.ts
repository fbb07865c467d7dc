import type { Knex } from 'knex';

/**
 * A skill node's unlock joins the money engine (docs/architecture.md "Money engine",
 * docs/progression.md "Unlocking a node"): a new kind of `hearth_move`, so the unlock and its
 * charges are one statement under the engine's one idempotency protocol, refused through its one
 * table of words.
 *
 * - `hearth_skill_node_unlock`: the node FOR SHARE → the player FOR KEY SHARE → the player's unlock
 *   row (claimed first: a parallel unlock of the same node waits on it, then finds it unlocked and
 *   charges nothing) → the inventories (the account's before a realm's) → the balance rows in
 *   currency-key order, each price charged through `hearth_currency_move`. A refusal (locked, a
 *   balance too low...) rolls the claim back with the charges.
 * - Its charges are a purchase's: `hearth_price_charges` and `hearth_pay_charges` (20261126191000).
 * - `hearth_check_unlocked` now counts a skill node the player unlocked as an unlock: an item type's
 *   `requires` may name either (item use and opening answer `locked` for a missing node as for a
 *   missing unlock).
 * - `hearth_move` gains the branch (marked `-- progression`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION hearth_skill_node_unlock(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      node skill_nodes%ROWTYPE;
      v_realm text := p_request->>'realmId';
      v_claimed text;
      v_missing jsonb;
      v_charges jsonb;
      v_movements jsonb;
    BEGIN
      SELECT * INTO node FROM skill_nodes WHERE environment_id = p_environment_id AND key = p_request->>'nodeKey' FOR SHARE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'skill-node-not-found'));
      END IF;
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
      -- A realm named must exist, whether or not a price is paid there.
      IF v_realm IS NOT NULL AND NOT EXISTS (SELECT 1 FROM realms r WHERE r.environment_id = p_environment_id AND r.key = v_realm) THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'realm-not-found'));
      END IF;
      -- Claimed first: a parallel unlock of this node waits here until this one commits (then inserts
      -- nothing: already unlocked, nothing charged) or rolls back (then it claims the node itself).
      INSERT INTO player_skill_nodes (player_id, environment_id, node_key) VALUES (p_player_id, p_environment_id, node.key)
        ON CONFLICT (player_id, node_key) DO NOTHING RETURNING node_key INTO v_claimed;
      IF v_claimed IS NULL THEN
        RETURN jsonb_build_object('nodeKey', node.key, 'alreadyUnlocked', true, 'charges', '[]'::jsonb);
      END IF;
      -- Parents (skill nodes) first, then the unlocks the node requires (an unlock or a skill node), in the node's order.
      SELECT jsonb_agg(r.key ORDER BY r.pos) INTO v_missing FROM (
        SELECT p.key, p.pos, true AS is_parent FROM jsonb_array_elements_text(node.parents) WITH ORDINALITY AS p(key, pos)
        UNION ALL
        SELECT q.key, 1000 + q.pos, false FROM jsonb_array_elements_text(node.requires) WITH ORDINALITY AS q(key, pos)
      ) r
      WHERE NOT EXISTS (SELECT 1 FROM player_skill_nodes s WHERE s.player_id = p_player_id AND s.node_key = r.key)
        AND (r.is_parent OR NOT EXISTS (SELECT 1 FROM player_unlocks u WHERE u.player_id = p_player_id AND u.key = r.key));
      IF v_missing IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'skill-node-locked', 'nodeKey', node.key, 'missing', v_missing));
      END IF;

      -- The charges as a purchase's (hearth_price_charges, hearth_pay_charges): account currencies
      -- from the account, made first; realm currencies from realmId's realm, or the current one.
      v_charges := hearth_price_charges(p_environment_id, jsonb_build_object('nodeKey', node.key), node.price_rule, node.prices, 1, p_request);
      IF hearth_charges_on_account(v_charges) THEN
        PERFORM 1 FROM hearth_choose_inventory(p_environment_id, p_player_id, 'account', NULL, false, NULL);
      END IF;
      v_movements := hearth_pay_charges(p_environment_id, p_player_id, v_charges, NULL, NULL, v_realm, 'skill-node', 'skill-node:' || node.key, p_max_balance);
      RETURN jsonb_build_object('nodeKey', node.key, 'alreadyUnlocked', false, 'charges', v_movements);
    END
    $fn$;

    -- locked when the player lacks an unlock the type requires: an unlock, or a skill node of that key (details.missing, in the type's order).
    CREATE OR REPLACE FUNCTION hearth_check_unlocked(p_player_id text, t item_types) RETURNS void
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_missing jsonb;
    BEGIN
      SELECT jsonb_agg(r.key ORDER BY r.n) INTO v_missing
        FROM jsonb_array_elements_text(t.requires) WITH ORDINALITY AS r(key, n)
        WHERE NOT EXISTS (SELECT 1 FROM player_unlocks u WHERE u.player_id = p_player_id AND u.key = r.key)
          AND NOT EXISTS (SELECT 1 FROM player_skill_nodes s WHERE s.player_id = p_player_id AND s.node_key = r.key);
      IF v_missing IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'locked', 'itemTypeKey', t.key, 'missing', v_missing));
      END IF;
    END
    $fn$;

    CREATE OR REPLACE FUNCTION hearth_move(p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      m record;
    BEGIN
      CASE p_kind
        WHEN 'credit', 'debit', 'refund', 'consume' THEN
          SELECT * INTO m FROM hearth_currency_move(p_environment_id, p_player_id, p_request->>'currencyKey', p_kind,
            (p_request->>'amount')::bigint, (p_request->>'allowance')::bigint, p_request->>'reason', p_request->>'reference',
            p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId', p_max_balance);
          RETURN hearth_movement(m, p_request->>'currencyKey', p_kind, (p_request->>'amount')::bigint, (p_request->>'allowance')::bigint,
            CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END);
        WHEN 'item-purchase' THEN
          RETURN hearth_item_purchase(p_environment_id, p_player_id, p_request, p_max_balance);
        WHEN 'item-grant' THEN
          RETURN hearth_item_grant(p_environment_id, p_player_id, p_request, p_max_balance);
        WHEN 'item-consume' THEN
          RETURN hearth_item_consume(p_environment_id, p_player_id, p_request, false);
        WHEN 'item-use' THEN
          RETURN hearth_item_consume(p_environment_id, p_player_id, p_request, true);
        WHEN 'stack-consume' THEN
          RETURN hearth_stack_consume(p_environment_id, p_player_id, p_request, false);
        WHEN 'stack-use' THEN
          RETURN hearth_stack_consume(p_environment_id, p_player_id, p_request, true);
        WHEN 'item-open' THEN
          RETURN hearth_item_open(p_environment_id, p_player_id, p_request, p_max_balance);
        -- cards
        WHEN 'card-grant' THEN
          RETURN hearth_card_grant(p_environment_id, p_player_id, p_request);
        WHEN 'card-consume' THEN
          RETURN hearth_card_consume(p_environment_id, p_player_id, p_request);
        WHEN 'card-stack-grant' THEN
          RETURN hearth_card_stack_grant(p_environment_id, p_player_id, p_request, p_max_balance);
        WHEN 'card-stack-consume' THEN
          RETURN hearth_card_stack_consume(p_environment_id, p_player_id, p_request);
        WHEN 'card-purchase' THEN
          RETURN hearth_card_purchase(p_environment_id, p_player_id, p_request, p_max_balance);
        -- progression
        WHEN 'skill-node-unlock' THEN
          RETURN hearth_skill_node_unlock(p_environment_id, p_player_id, p_request, p_max_balance);
      END CASE;
    END
    $fn$;
  `);
}

export async function down(): Promise<void> {
  throw new Error('20261126195600_progression_unlock cannot be undone: restore a backup taken before it');
}
