import type { Knex } from 'knex';

/**
 * Cards join the money engine (docs/architecture.md "Money engine", docs/cards.md): a card grant, a
 * card's consumption, a card stack's grant and consumption, and a card purchase are kinds of
 * `hearth_move`, so each is one statement under the engine's one idempotency protocol
 * (`hearth_idempotent_move`) and refuses through its one table of words.
 *
 * A purchase's price list is charged by two functions both purchases now share, factored out of
 * `hearth_item_purchase` (which is replaced to use them, doing what it did):
 * - `hearth_price_charges`: the charges a price list asks (priceRule, payWith, each price's currency
 *   defined, switched on and, if consumed, given its allowance), in currency-key order, checked
 *   before anything is locked;
 * - `hearth_pay_charges`: each charge made through `hearth_currency_move`, from the inventory the
 *   purchase puts things in when the currency is held in that kind of place, else from the account or
 *   a realm (the one named, or the current one). A skill node's unlock pays through both too.
 *
 * The rest, once:
 * - `hearth_card_json`: a Card (spec §2) as the API answers it, for the engine's answers and the lists.
 * - `hearth_card_type_on`, `hearth_check_card_template`: the definitions a card move names, read FOR
 *   SHARE in the move's statement (never from a cache).
 * - `hearth_choose_card_inventory`: cards have no place of their own: with neither inventoryId nor
 *   realmId the current realm's inventory, and any inventory of the player's when named.
 * - `hearth_grant_card`, `hearth_add_card_stack`: a card made (or the first grant under its grantKey
 *   found), a stack grown under its row lock.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION hearth_card_json(c cards) RETURNS jsonb
    LANGUAGE sql STABLE AS $fn$
      SELECT jsonb_build_object('id', c.id, 'inventoryId', c.inventory_id, 'cardTypeKey', c.card_type_key, 'cardTemplateKey', c.card_template_key,
        'grantKey', c.grant_key, 'consumedAt', to_char(c.consumed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', c.data)
    $fn$;

    -- The charges a price list asks, in currency-key order (the balances' lock order), each price
    -- times p_quantity; refusals name p_subject ({"itemTypeKey": …} or {"cardTypeKey": …}).
    CREATE FUNCTION hearth_price_charges(p_environment_id bigint, p_subject jsonb, p_price_rule text, p_prices jsonb, p_quantity bigint, p_request jsonb) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      c currencies%ROWTYPE;
      v_pay_with text := p_request->>'payWith';
      v_prices text[];
      v_price jsonb;
      v_charges jsonb := '[]'::jsonb;
    BEGIN
      SELECT array_agg(p->>'currencyKey') INTO v_prices FROM jsonb_array_elements(p_prices) p;
      IF v_pay_with IS NOT NULL AND NOT (v_pay_with = ANY (coalesce(v_prices, '{}'))) THEN
        PERFORM hearth_refuse(p_subject || jsonb_build_object('outcome', 'pay-with-unpriced', 'payWith', v_pay_with, 'prices', coalesce(to_jsonb(v_prices), '[]'::jsonb)));
      END IF;
      IF p_price_rule = 'any' AND v_pay_with IS NULL THEN
        PERFORM hearth_refuse(p_subject || jsonb_build_object('outcome', 'pay-with-missing', 'prices', coalesce(to_jsonb(v_prices), '[]'::jsonb)));
      END IF;
      FOR v_price IN
        SELECT p FROM jsonb_array_elements(p_prices) p
        WHERE p_price_rule = 'all' OR p->>'currencyKey' = v_pay_with
        ORDER BY p->>'currencyKey' COLLATE "C"
      LOOP
        SELECT * INTO c FROM currencies WHERE environment_id = p_environment_id AND key = v_price->>'currencyKey';
        -- A price in a currency the environment does not have makes the thing not for sale, never free.
        IF NOT FOUND THEN
          PERFORM hearth_refuse(p_subject || jsonb_build_object('outcome', 'price-currency-not-found', 'currencyKey', v_price->>'currencyKey'));
        END IF;
        IF NOT c.enabled THEN
          PERFORM hearth_refuse(p_subject || jsonb_build_object('outcome', 'price-currency-disabled', 'currencyKey', c.key));
        END IF;
        IF c.kind = 'consumed' AND p_request->'allowances'->c.key IS NULL THEN
          PERFORM hearth_refuse(p_subject || jsonb_build_object('outcome', 'allowance-missing', 'currencyKey', c.key));
        END IF;
        v_charges := v_charges || jsonb_build_object(
          'currencyKey', c.key, 'scope', c.scope, 'kind', CASE c.kind WHEN 'balance' THEN 'debit' ELSE 'consume' END,
          'cost', (v_price->>'amount')::bigint * p_quantity, 'allowance', p_request->'allowances'->c.key);
      END LOOP;
      RETURN v_charges;
    END
    $fn$;

    -- Makes the charges (the player held, the account's inventory made first by the caller when a
    -- charge is paid there: hearth_charges_on_account) and answers the Movements; a refusal rolls
    -- every charge back. Each charge is paid from p_home_inventory (where what is bought goes; its
    -- realm p_home_realm, NULL for the account) when the currency is held in that kind of place,
    -- otherwise from the account, or from p_realm_key's realm (the current realm when NULL). A move
    -- with no home of its own (a skill node's unlock) passes NULL. The ledger entries carry p_reason
    -- and p_reference. Purchases (items, cards) and skill-node unlocks all pay through it.
    CREATE FUNCTION hearth_pay_charges(
      p_environment_id bigint, p_player_id text, p_charges jsonb, p_home_inventory text, p_home_realm text, p_realm_key text,
      p_reason text, p_reference text, p_max_balance bigint
    ) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      m record;
      v_pay record;
      v_charge jsonb;
      v_pay_inventory text;
      v_movements jsonb := '[]'::jsonb;
    BEGIN
      FOR v_charge IN SELECT ch FROM jsonb_array_elements(p_charges) ch LOOP
        IF p_home_inventory IS NOT NULL AND (p_home_realm IS NULL) = (v_charge->>'scope' = 'account') THEN
          v_pay_inventory := p_home_inventory;
        ELSE
          SELECT * INTO v_pay FROM hearth_choose_inventory(p_environment_id, p_player_id, v_charge->>'scope', NULL,
            v_charge->>'scope' = 'realm' AND p_realm_key IS NOT NULL, p_realm_key);
          IF v_pay.outcome <> 'chosen' THEN
            PERFORM hearth_refuse(jsonb_build_object('outcome', v_pay.outcome, 'currencyKey', v_charge->>'currencyKey'));
          END IF;
          v_pay_inventory := v_pay.inventory_id;
        END IF;
        SELECT * INTO m FROM hearth_currency_move(p_environment_id, p_player_id, v_charge->>'currencyKey', v_charge->>'kind',
          (v_charge->>'cost')::bigint, (v_charge->>'allowance')::bigint, p_reason, p_reference, v_pay_inventory, false, NULL, p_max_balance);
        v_movements := v_movements || hearth_movement(m, v_charge->>'currencyKey', v_charge->>'kind', (v_charge->>'cost')::bigint, (v_charge->>'allowance')::bigint,
          CASE WHEN p_home_inventory IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END);
      END LOOP;
      RETURN v_movements;
    END
    $fn$;

    -- Whether a charge is paid in a currency held on the account (its inventory is then made first).
    CREATE FUNCTION hearth_charges_on_account(p_charges jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS $fn$
      SELECT EXISTS (SELECT 1 FROM jsonb_array_elements(p_charges) ch WHERE ch->>'scope' = 'account')
    $fn$;

    -- The item purchase as before (docs/economy.md "Buying"), its price list charged by the shared functions.
    CREATE OR REPLACE FUNCTION hearth_item_purchase(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      t item_types%ROWTYPE;
      v_home record;
      v_quantity bigint := coalesce((p_request->>'quantity')::bigint, 1);
      v_charges jsonb;
      v_movements jsonb;
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
      v_charges := hearth_price_charges(p_environment_id, jsonb_build_object('itemTypeKey', t.key), t.price_rule, t.prices, v_quantity, p_request);

      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
      -- Inventories are made account first, then a realm's: two purchases making both cannot wait on each other.
      IF t.scope = 'account' OR hearth_charges_on_account(v_charges) THEN
        PERFORM 1 FROM hearth_choose_inventory(p_environment_id, p_player_id, 'account', NULL, false, NULL);
      END IF;
      SELECT * INTO v_home FROM hearth_choose_inventory(p_environment_id, p_player_id, t.scope,
        p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId');
      IF v_home.outcome <> 'chosen' THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', v_home.outcome, 'itemTypeKey', t.key,
          'field', CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END));
      END IF;
      v_movements := hearth_pay_charges(p_environment_id, p_player_id, v_charges, v_home.inventory_id, v_home.realm_key, NULL, 'purchase', 'item:' || t.key, p_max_balance);
      -- Same statement: an owned-limit here rolls the charges back with it.
      RETURN jsonb_build_object('replayed', false, 'charges', v_movements,
        'granted', hearth_grant_items(p_environment_id, p_player_id, v_home.inventory_id, t, v_quantity, NULL, NULL, p_max_balance));
    END
    $fn$;

    -- The card type a move names, FOR SHARE until the move commits; not-found when the environment has none.
    CREATE FUNCTION hearth_card_type_on(p_environment_id bigint, p_key text) RETURNS card_types
    LANGUAGE plpgsql AS $fn$
    DECLARE
      t card_types%ROWTYPE;
    BEGIN
      SELECT * INTO t FROM card_types WHERE environment_id = p_environment_id AND key = p_key FOR SHARE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-type-not-found', 'cardTypeKey', p_key));
      END IF;
      RETURN t;
    END
    $fn$;

    -- A template named (or none): defined (not-found) and switched on (disabled).
    CREATE FUNCTION hearth_check_card_template(p_environment_id bigint, p_key text) RETURNS void
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_enabled boolean;
    BEGIN
      IF p_key IS NULL THEN
        RETURN;
      END IF;
      SELECT enabled INTO v_enabled FROM card_templates WHERE environment_id = p_environment_id AND key = p_key FOR SHARE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-template-not-found', 'cardTemplateKey', p_key));
      END IF;
      IF NOT v_enabled THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-template-disabled', 'cardTemplateKey', p_key));
      END IF;
    END
    $fn$;

    -- Where a card move puts or takes (the player held): the named inventory (account or realm, any
    -- holds cards), the named realm's (null: the account's), else the current realm's.
    CREATE FUNCTION hearth_choose_card_inventory(
      p_environment_id bigint, p_player_id text, p_request jsonb, p_card_type_key text, OUT inventory_id text, OUT realm_key text
    ) RETURNS record
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_home record;
    BEGIN
      SELECT * INTO v_home FROM hearth_choose_inventory(p_environment_id, p_player_id, 'realm',
        p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId');
      -- held-per-realm only says the place named is the account's, which holds cards too.
      IF v_home.outcome NOT IN ('chosen', 'held-per-realm') THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', v_home.outcome, 'cardTypeKey', p_card_type_key,
          'field', CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END));
      END IF;
      inventory_id := v_home.inventory_id;
      realm_key := v_home.realm_key;
    END
    $fn$;

    -- The first grant under (player, type, grantKey), answered as a grant; NULL when there is none.
    CREATE FUNCTION hearth_first_card_grant(p_player_id text, p_card_type_key text, p_grant_key text) RETURNS jsonb
    LANGUAGE sql STABLE AS $fn$
      SELECT jsonb_build_object('card', hearth_card_json(c), 'alreadyGranted', true)
      FROM cards c WHERE c.player_id = p_player_id AND c.card_type_key = p_card_type_key AND c.grant_key = p_grant_key
    $fn$;

    -- One card made in a chosen inventory; under a grantKey granted before (or in parallel: the unique
    -- index makes this insert wait for it, then insert nothing) the first grant is the answer.
    CREATE FUNCTION hearth_grant_card(
      p_environment_id bigint, p_player_id text, p_inventory_id text, p_card_type_key text, p_template_key text, p_grant_key text, p_data jsonb
    ) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_card jsonb;
    BEGIN
      WITH made AS (
        INSERT INTO cards (id, environment_id, player_id, inventory_id, card_type_key, card_template_key, grant_key, data)
          VALUES (hearth_random_id(), p_environment_id, p_player_id, p_inventory_id, p_card_type_key, p_template_key, p_grant_key, coalesce(p_data, '{}'::jsonb))
          ON CONFLICT (player_id, card_type_key, grant_key) DO NOTHING
          RETURNING *
      )
      SELECT hearth_card_json(made) INTO v_card FROM made;
      IF v_card IS NULL THEN
        RETURN hearth_first_card_grant(p_player_id, p_card_type_key, p_grant_key);
      END IF;
      RETURN jsonb_build_object('card', v_card, 'alreadyGranted', false);
    END
    $fn$;

    -- A card stack grown by p_quantity under its row lock, never past p_max_balance (owned-limit).
    CREATE FUNCTION hearth_add_card_stack(p_inventory_id text, p_card_type_key text, p_quantity bigint, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_after bigint;
      v_held bigint;
    BEGIN
      INSERT INTO card_stacks AS s (inventory_id, card_type_key, quantity) VALUES (p_inventory_id, p_card_type_key, p_quantity)
        ON CONFLICT (inventory_id, card_type_key) DO UPDATE SET quantity = s.quantity + EXCLUDED.quantity
        WHERE s.quantity + EXCLUDED.quantity <= p_max_balance
        RETURNING s.quantity INTO v_after;
      IF v_after IS NULL THEN
        SELECT s.quantity INTO v_held FROM card_stacks s WHERE s.inventory_id = p_inventory_id AND s.card_type_key = p_card_type_key;
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'owned-limit', 'cardTypeKey', p_card_type_key, 'held', v_held, 'requested', p_quantity, 'limit', p_max_balance));
      END IF;
      RETURN jsonb_build_object('inventoryId', p_inventory_id, 'cardTypeKey', p_card_type_key, 'quantity', v_after);
    END
    $fn$;

    CREATE FUNCTION hearth_hold_card_player(p_environment_id bigint, p_player_id text) RETURNS void
    LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
    END
    $fn$;

    -- POST /players/:playerId/cards/grant (docs/cards.md "Granting"): a grantKey granted before answers
    -- the first grant whatever has changed since; else the type and template must be switched on.
    CREATE FUNCTION hearth_card_grant(p_environment_id bigint, p_player_id text, p_request jsonb) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      t card_types%ROWTYPE;
      v_grant_key text := p_request->>'grantKey';
      v_first jsonb;
      v_home record;
    BEGIN
      t := hearth_card_type_on(p_environment_id, p_request->>'cardTypeKey');
      PERFORM hearth_hold_card_player(p_environment_id, p_player_id);
      IF v_grant_key IS NOT NULL THEN
        v_first := hearth_first_card_grant(p_player_id, t.key, v_grant_key);
        IF v_first IS NOT NULL THEN
          RETURN v_first;
        END IF;
      END IF;
      IF NOT t.enabled THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-type-disabled', 'cardTypeKey', t.key));
      END IF;
      PERFORM hearth_check_card_template(p_environment_id, p_request->>'cardTemplateKey');
      v_home := hearth_choose_card_inventory(p_environment_id, p_player_id, p_request, t.key);
      RETURN hearth_grant_card(p_environment_id, p_player_id, v_home.inventory_id, t.key, p_request->>'cardTemplateKey', v_grant_key, p_request->'data');
    END
    $fn$;

    -- POST /players/:playerId/cards/:cardId/consume: the card taken away, and out of every deck, in one
    -- statement; its row lock makes parallel consumptions run one after another.
    CREATE FUNCTION hearth_card_consume(p_environment_id bigint, p_player_id text, p_request jsonb) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      c cards%ROWTYPE;
    BEGIN
      PERFORM hearth_hold_card_player(p_environment_id, p_player_id);
      SELECT * INTO c FROM cards WHERE id = p_request->>'cardId' AND player_id = p_player_id AND environment_id = p_environment_id FOR UPDATE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-not-found'));
      END IF;
      IF c.consumed_at IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-already-consumed', 'cardTypeKey', c.card_type_key, 'consumedAt', hearth_card_json(c)->'consumedAt'));
      END IF;
      UPDATE cards SET consumed_at = clock_timestamp() WHERE id = c.id RETURNING * INTO c;
      DELETE FROM deck_entries WHERE card_id = c.id;
      RETURN hearth_card_json(c);
    END
    $fn$;

    -- POST /players/:playerId/card-stacks/grant: a switched-on type's stack grows by quantity.
    CREATE FUNCTION hearth_card_stack_grant(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      t card_types%ROWTYPE;
      v_home record;
    BEGIN
      t := hearth_card_type_on(p_environment_id, p_request->>'cardTypeKey');
      PERFORM hearth_hold_card_player(p_environment_id, p_player_id);
      IF NOT t.enabled THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-type-disabled', 'cardTypeKey', t.key));
      END IF;
      v_home := hearth_choose_card_inventory(p_environment_id, p_player_id, p_request, t.key);
      RETURN hearth_add_card_stack(v_home.inventory_id, t.key, (p_request->>'quantity')::bigint, p_max_balance);
    END
    $fn$;

    -- POST /players/:playerId/card-stacks/consume: quantity taken from the stack under its row lock;
    -- insufficient-balance when fewer are held. A switched-off type's cards may still be taken.
    CREATE FUNCTION hearth_card_stack_consume(p_environment_id bigint, p_player_id text, p_request jsonb) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      t card_types%ROWTYPE;
      v_home record;
      v_held bigint;
      v_quantity bigint := (p_request->>'quantity')::bigint;
    BEGIN
      t := hearth_card_type_on(p_environment_id, p_request->>'cardTypeKey');
      PERFORM hearth_hold_card_player(p_environment_id, p_player_id);
      v_home := hearth_choose_card_inventory(p_environment_id, p_player_id, p_request, t.key);
      SELECT s.quantity INTO v_held FROM card_stacks s WHERE s.inventory_id = v_home.inventory_id AND s.card_type_key = t.key FOR UPDATE;
      v_held := coalesce(v_held, 0);
      IF v_held < v_quantity THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'insufficient-balance', 'cardTypeKey', t.key, 'held', v_held, 'requested', v_quantity));
      END IF;
      UPDATE card_stacks SET quantity = v_held - v_quantity WHERE inventory_id = v_home.inventory_id AND card_type_key = t.key;
      RETURN jsonb_build_object('inventoryId', v_home.inventory_id, 'cardTypeKey', t.key, 'quantity', v_held - v_quantity);
    END
    $fn$;

    -- POST /players/:playerId/purchases/cards (docs/cards.md "Buying cards"): checks, then in lock order
    -- the card type and template FOR SHARE → the player → the inventories (the account's before a
    -- realm's) → the balance rows in currency-key order → the card or stack row. One card or one more
    -- of the stack; a retry under the Idempotency-Key is the engine's replay.
    CREATE FUNCTION hearth_card_purchase(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      t card_types%ROWTYPE;
      v_as_stack boolean := coalesce(p_request->>'as', 'instance') = 'stack';
      v_home record;
      v_charges jsonb;
      v_movements jsonb;
    BEGIN
      t := hearth_card_type_on(p_environment_id, p_request->>'cardTypeKey');
      IF NOT t.purchasable THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'not-purchasable', 'cardTypeKey', t.key));
      END IF;
      IF NOT t.enabled THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-type-disabled', 'cardTypeKey', t.key));
      END IF;
      -- A stack counts cards of a type: it has no template and no data of its own.
      IF v_as_stack AND (p_request->'cardTemplateKey' IS NOT NULL OR p_request->'data' IS NOT NULL) THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'stack-card-fields', 'cardTypeKey', t.key,
          'field', CASE WHEN p_request->'cardTemplateKey' IS NOT NULL THEN 'cardTemplateKey' ELSE 'data' END));
      END IF;
      PERFORM hearth_check_card_template(p_environment_id, p_request->>'cardTemplateKey');
      v_charges := hearth_price_charges(p_environment_id, jsonb_build_object('cardTypeKey', t.key), t.price_rule, t.prices, 1, p_request);

      PERFORM hearth_hold_card_player(p_environment_id, p_player_id);
      IF hearth_charges_on_account(v_charges) THEN
        PERFORM 1 FROM hearth_choose_inventory(p_environment_id, p_player_id, 'account', NULL, false, NULL);
      END IF;
      v_home := hearth_choose_card_inventory(p_environment_id, p_player_id, p_request, t.key);
      v_movements := hearth_pay_charges(p_environment_id, p_player_id, v_charges, v_home.inventory_id, v_home.realm_key, NULL, 'purchase', 'card:' || t.key, p_max_balance);
      RETURN jsonb_build_object('replayed', false, 'charges', v_movements, 'granted',
        CASE WHEN v_as_stack THEN hearth_add_card_stack(v_home.inventory_id, t.key, 1, p_max_balance)
          ELSE hearth_grant_card(p_environment_id, p_player_id, v_home.inventory_id, t.key, p_request->>'cardTemplateKey', NULL, p_request->'data') END);
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
        -- end cards
      END CASE;
    END
    $fn$;
  `);
}

export async function down(): Promise<void> {
  throw new Error('20261126191000_cards_moves cannot be undone: restore a backup taken before it');
}
