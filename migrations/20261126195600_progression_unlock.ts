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
 * - `hearth_priced_charges` and `hearth_pay_charges`: what a move that is paid for charges, written
 *   once for the purchase and the unlock (the card purchases join them): the prices paid (every one
 *   for `all`, the one `payWith` names for `any`), checked before anything is locked (a currency
 *   missing or switched off, a consumed currency without its allowance), then each paid through
 *   `hearth_currency_move` in currency-key order, the account's inventory made before a realm's.
 *   `hearth_item_purchase` is replaced to use them, its answers and refusals unchanged.
 * - `hearth_check_unlocked` now counts a skill node the player unlocked as an unlock: an item type's
 *   `requires` may name either (item use and opening answer `locked` for a missing node as for a
 *   missing unlock).
 * - `hearth_move` gains the branch (marked `-- progression`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The charges of a move paid for (p_subject names what is paid for: {itemTypeKey} or {nodeKey},
    -- carried by every refusal): the prices paid, every one for 'all', the one payWith names for
    -- 'any', in currency-key order (the balances' lock order), each multiplied by p_quantity. Checked
    -- before anything is locked: a price in a currency the environment does not have, or has switched
    -- off, refuses the move (never free by mistake); a consumed currency needs its allowance.
    CREATE FUNCTION hearth_priced_charges(p_environment_id bigint, p_subject jsonb, p_prices jsonb, p_price_rule text, p_request jsonb, p_quantity bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      c currencies%ROWTYPE;
      v_pay_with text := p_request->>'payWith';
      v_prices text[];
      v_price jsonb;
      v_charges jsonb := '[]'::jsonb;
    BEGIN
      SELECT coalesce(array_agg(p->>'currencyKey'), '{}'::text[]) INTO v_prices FROM jsonb_array_elements(p_prices) p;
      IF v_pay_with IS NOT NULL AND NOT (v_pay_with = ANY (v_prices)) THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'pay-with-unpriced', 'payWith', v_pay_with, 'prices', to_jsonb(v_prices)) || p_subject);
      END IF;
      IF p_price_rule = 'any' AND v_pay_with IS NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'pay-with-missing', 'prices', to_jsonb(v_prices)) || p_subject);
      END IF;
      FOR v_price IN
        SELECT p FROM jsonb_array_elements(p_prices) p
        WHERE p_price_rule = 'all' OR p->>'currencyKey' = v_pay_with
        ORDER BY p->>'currencyKey' COLLATE "C"
      LOOP
        SELECT * INTO c FROM currencies WHERE environment_id = p_environment_id AND key = v_price->>'currencyKey';
        IF NOT FOUND THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'price-currency-not-found', 'currencyKey', v_price->>'currencyKey') || p_subject);
        END IF;
        IF NOT c.enabled THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'price-currency-disabled', 'currencyKey', c.key) || p_subject);
        END IF;
        IF c.kind = 'consumed' AND p_request->'allowances'->c.key IS NULL THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'allowance-missing', 'currencyKey', c.key) || p_subject);
        END IF;
        v_charges := v_charges || jsonb_build_object(
          'currencyKey', c.key, 'scope', c.scope, 'kind', CASE c.kind WHEN 'balance' THEN 'debit' ELSE 'consume' END,
          'cost', (v_price->>'amount')::bigint * p_quantity, 'allowance', p_request->'allowances'->c.key);
      END LOOP;
      RETURN v_charges;
    END
    $fn$;

    -- Pays charges (hearth_priced_charges) for a player the caller holds, answering the Movements:
    -- each from p_home_inventory (what is bought goes there; p_home_realm NULL: the account) when the
    -- currency is held in that kind of place, else from the account, or from p_realm_key's realm (the
    -- current realm when NULL). The account's inventory is made before any realm's: two moves making
    -- both cannot wait on each other.
    CREATE FUNCTION hearth_pay_charges(
      p_environment_id bigint, p_player_id text, p_charges jsonb, p_home_inventory text, p_home_realm text, p_realm_key text,
      p_reason text, p_reference text, p_max_balance bigint
    ) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      m record;
      v_pay record;
      v_charge jsonb;
      v_inventory text;
      v_movements jsonb := '[]'::jsonb;
    BEGIN
      IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_charges) ch WHERE ch->>'scope' = 'account') THEN
        PERFORM 1 FROM hearth_choose_inventory(p_environment_id, p_player_id, 'account', NULL, false, NULL);
      END IF;
      FOR v_charge IN SELECT ch FROM jsonb_array_elements(p_charges) ch LOOP
        IF p_home_inventory IS NOT NULL AND (p_home_realm IS NULL) = (v_charge->>'scope' = 'account') THEN
          v_inventory := p_home_inventory;
        ELSE
          SELECT * INTO v_pay FROM hearth_choose_inventory(p_environment_id, p_player_id, v_charge->>'scope', NULL,
            v_charge->>'scope' = 'realm' AND p_realm_key IS NOT NULL, p_realm_key);
          IF v_pay.outcome <> 'chosen' THEN
            PERFORM hearth_refuse(jsonb_build_object('outcome', v_pay.outcome, 'currencyKey', v_charge->>'currencyKey'));
          END IF;
          v_inventory := v_pay.inventory_id;
        END IF;
        SELECT * INTO m FROM hearth_currency_move(p_environment_id, p_player_id, v_charge->>'currencyKey', v_charge->>'kind',
          (v_charge->>'cost')::bigint, (v_charge->>'allowance')::bigint, p_reason, p_reference, v_inventory, false, NULL, p_max_balance);
        v_movements := v_movements || hearth_movement(m, v_charge->>'currencyKey', v_charge->>'kind', (v_charge->>'cost')::bigint, (v_charge->>'allowance')::bigint,
          CASE WHEN p_home_inventory IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END);
      END LOOP;
      RETURN v_movements;
    END
    $fn$;

    -- A purchase (docs/economy.md "Buying"), on the charges written once above: the checks (the
    -- charges' among them) before any lock, then in lock order the item type FOR SHARE → the player →
    -- the inventories (the account's before a realm's) → the balance rows in currency-key order → the
    -- item rows. Answers the Purchase.
    CREATE OR REPLACE FUNCTION hearth_item_purchase(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      t item_types%ROWTYPE;
      v_home record;
      v_quantity bigint := coalesce((p_request->>'quantity')::bigint, 1);
      v_charges jsonb;
    BEGIN
      SELECT * INTO t FROM item_types WHERE environment_id = p_environment_id AND key = p_request->>'itemTypeKey' FOR SHARE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-type-not-found'));
      END IF;
      IF NOT t.purchasable THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'not-purchasable', 'itemTypeKey', t.key));
      END IF;
      IF NOT t.enabled THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-type-disabled', 'itemTypeKey', t.key));
      END IF;
      v_charges := hearth_priced_charges(p_environment_id, jsonb_build_object('itemTypeKey', t.key), t.prices, t.price_rule, p_request, v_quantity);

      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
      -- Inventories are made account first, then a realm's: two purchases making both cannot wait on each other.
      IF t.scope = 'account' OR EXISTS (SELECT 1 FROM jsonb_array_elements(v_charges) ch WHERE ch->>'scope' = 'account') THEN
        PERFORM 1 FROM hearth_choose_inventory(p_environment_id, p_player_id, 'account', NULL, false, NULL);
      END IF;
      SELECT * INTO v_home FROM hearth_choose_inventory(p_environment_id, p_player_id, t.scope,
        p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId');
      IF v_home.outcome <> 'chosen' THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', v_home.outcome, 'itemTypeKey', t.key,
          'field', CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END));
      END IF;
      -- Same statement: an owned-limit from the grant rolls the charges back with it.
      RETURN jsonb_build_object('replayed', false,
        'charges', hearth_pay_charges(p_environment_id, p_player_id, v_charges, v_home.inventory_id, v_home.realm_key, NULL, 'purchase', 'item:' || t.key, p_max_balance),
        'granted', hearth_grant_items(p_environment_id, p_player_id, v_home.inventory_id, t, v_quantity, NULL, NULL, p_max_balance));
    END
    $fn$;

    CREATE FUNCTION hearth_skill_node_unlock(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      node skill_nodes%ROWTYPE;
      v_realm text := p_request->>'realmId';
      v_claimed text;
      v_missing jsonb;
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

      -- Account currencies from the account; realm currencies from realmId's realm, or the current one.
      v_movements := hearth_pay_charges(p_environment_id, p_player_id,
        hearth_priced_charges(p_environment_id, jsonb_build_object('nodeKey', node.key), node.prices, node.price_rule, p_request, 1),
        NULL, NULL, v_realm, 'skill-node', 'skill-node:' || node.key, p_max_balance);
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
