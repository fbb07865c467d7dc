import type { Knex } from 'knex';

/**
 * The money engine (docs/architecture.md "Money engine", docs/economy.md): every move of value is a
 * database function, and the rules each kind of move shares are written once, here:
 *
 * - `hearth_hold_player`: the player's row FOR KEY SHARE (deletion, FOR UPDATE, waits), for SQL and
 *   TypeScript alike (apps/core/src/players/hold.ts runs it).
 * - `hearth_random_id`: the ids of rows the engine makes (inventories, items): 22 base62 characters
 *   from PostgreSQL's strong random source, as apps/core/src/ids.ts makes them.
 * - `hearth_choose_inventory`: where something is moved (spec "Choosing an inventory"): the body's
 *   inventoryId or realmId, else the scope's place (the account, the current realm), made when
 *   missing, refused when it does not fit the scope. The currency move, purchases, and the items
 *   routes (through EconomyService.choose) all use it.
 * - `hearth_currency_move`: one currency move (credit, debit, refund, consume); replaced to use the two
 *   above, and to make an inventory's id only when it makes one.
 * - `hearth_grant_items`: items put into a chosen inventory (counted stacks, one-by-one items, maxOwned).
 * - `hearth_item_purchase`: every price charged through `hearth_currency_move`, the items granted
 *   through `hearth_grant_items`: a purchase is one statement.
 * - `hearth_move`: the engine's one entry, by kind. A refusal raises SQLSTATE HM001 with the outcome
 *   as JSON in DETAIL, so the statement (and the caller's transaction) writes nothing; the service
 *   words it from one table (apps/core/src/economy/refusals.ts).
 * - `hearth_idempotent_move`: the one idempotency protocol of the engine's moves: the record claimed,
 *   the move made by `hearth_move`, the answer recorded, in one statement (runIdempotent's rules).
 *
 * The record now keeps the answer the API gave (a Movement, a Purchase), as runIdempotent's records
 * do, so a replay needs no mapping and no branch by who wrote the record. Records the replaced
 * `hearth_idempotent_currency_move` kept hold the move's outcome row: they are rewritten to the
 * Movement they answered (read from their ledger entry), so a retry across the upgrade still replays.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- PL/pgSQL, not SQL: a SQL function that cannot be inlined is planned at every call (about 25 µs
    -- a move), PL/pgSQL keeps its plan.
    CREATE FUNCTION hearth_hold_player(p_environment_id bigint, p_player_id text) RETURNS SETOF players
    LANGUAGE plpgsql AS $fn$
    BEGIN
      RETURN QUERY SELECT * FROM players WHERE id = p_player_id AND environment_id = p_environment_id FOR KEY SHARE;
    END
    $fn$;

    CREATE FUNCTION hearth_random_id() RETURNS text
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      v_alphabet constant text := '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
      v_id text := '';
      v_bytes bytea;
      v_byte int;
    BEGIN
      WHILE length(v_id) < 22 LOOP
        v_bytes := decode(replace(gen_random_uuid()::text, '-', ''), 'hex');
        -- A version 4 uuid: bytes 6 and 8 carry fixed bits, the other 14 are random.
        FOR i IN 0..15 LOOP
          CONTINUE WHEN i = 6 OR i = 8;
          v_byte := get_byte(v_bytes, i);
          -- 248 = 4 * 62: rejecting the top values keeps the distribution uniform.
          IF v_byte < 248 AND length(v_id) < 22 THEN
            v_id := v_id || substr(v_alphabet, v_byte % 62 + 1, 1);
          END IF;
        END LOOP;
      END LOOP;
      RETURN v_id;
    END
    $fn$;

    CREATE FUNCTION hearth_choose_inventory(
      p_environment_id bigint,
      p_player_id text,       -- held by the caller (hearth_hold_player)
      p_scope text,           -- account | realm: where what is moved is held
      p_inventory_id text,    -- the body's inventoryId, or NULL
      p_realm_given boolean,  -- the body named realmId (p_realm_key NULL: the account)
      p_realm_key text,
      -- One row, not a set: a plain function call costs less than a set-returning one on every move.
      OUT outcome text,
      OUT inventory_id text,
      OUT realm_key text
    ) RETURNS record
    LANGUAGE plpgsql AS $fn$
    #variable_conflict use_column
    DECLARE
      v_inventory text;
      v_realm text;
    BEGIN
      IF p_inventory_id IS NOT NULL AND p_realm_given THEN
        outcome := 'both-choices';
        RETURN;
      END IF;
      IF p_inventory_id IS NOT NULL THEN
        SELECT i.id, i.realm_key INTO v_inventory, v_realm FROM inventories i
          WHERE i.id = p_inventory_id AND i.player_id = p_player_id AND i.environment_id = p_environment_id;
        IF NOT FOUND THEN
          outcome := 'inventory-not-found';
          RETURN;
        END IF;
      ELSE
        IF p_realm_given THEN
          v_realm := p_realm_key;
          IF v_realm IS NOT NULL AND NOT EXISTS (SELECT 1 FROM realms r WHERE r.environment_id = p_environment_id AND r.key = v_realm) THEN
            outcome := 'realm-not-found';
            RETURN;
          END IF;
        ELSIF p_scope = 'realm' THEN
          v_realm := hearth_current_realm(p_environment_id);
          IF v_realm IS NULL THEN
            outcome := 'no-current-realm';
            RETURN;
          END IF;
        END IF;
        -- Found first: an inventory is made once and read on every move after. Made once whoever
        -- races: the insert waits for a concurrent maker, and the next statement sees what it made.
        SELECT i.id INTO v_inventory FROM inventories i WHERE i.player_id = p_player_id AND i.realm_key IS NOT DISTINCT FROM v_realm;
        IF v_inventory IS NULL THEN
          INSERT INTO inventories (id, environment_id, player_id, realm_key) VALUES (hearth_random_id(), p_environment_id, p_player_id, v_realm)
            ON CONFLICT (player_id, realm_key) DO NOTHING RETURNING id INTO v_inventory;
          IF v_inventory IS NULL THEN
            SELECT i.id INTO v_inventory FROM inventories i WHERE i.player_id = p_player_id AND i.realm_key IS NOT DISTINCT FROM v_realm;
          END IF;
        END IF;
      END IF;
      inventory_id := v_inventory;
      realm_key := v_realm;
      -- What is held on the account is moved only in the account inventory, what is held per realm only in realms.
      outcome := CASE WHEN (v_realm IS NULL) = (p_scope = 'account') THEN 'chosen' WHEN p_scope = 'account' THEN 'held-on-account' ELSE 'held-per-realm' END;
    END
    $fn$;

    DROP FUNCTION hearth_idempotent_currency_move(text, text, text, bigint, text, text, text, bigint, bigint, text, text, text, boolean, text, text, bigint);
    DROP FUNCTION hearth_currency_move(bigint, text, text, text, bigint, bigint, text, text, text, boolean, text, text, bigint);

    CREATE FUNCTION hearth_currency_move(
      p_environment_id bigint,
      p_player_id text,
      p_currency_key text,
      p_kind text,            -- credit | debit | refund | consume
      p_amount bigint,
      p_allowance bigint,     -- consume only
      p_reason text,
      p_reference text,
      p_inventory_id text,    -- the body's inventoryId, or NULL
      p_realm_given boolean,  -- the body named realmId (p_realm_key NULL: the account)
      p_realm_key text,
      p_max_balance bigint    -- no figure passes it, whatever the definition says
    ) RETURNS TABLE (outcome text, currency_kind text, held bigint, cap bigint, inventory_id text, ledger_id bigint, change bigint, balance_after bigint)
    LANGUAGE plpgsql AS $fn$
    #variable_conflict use_column
    DECLARE
      c currencies%ROWTYPE;
      v_cap bigint;
      v_chosen text;
      v_inventory text;
      v_held bigint;
      v_change bigint;
      v_entry bigint;
    BEGIN
      SELECT * INTO c FROM currencies WHERE environment_id = p_environment_id AND key = p_currency_key;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'currency-not-found', NULL::text, NULL::bigint, NULL::bigint, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      v_cap := least(coalesce(c.max, p_max_balance), p_max_balance);
      -- credit and debit move balance currencies, consume consumed ones, refund either.
      IF c.kind <> (CASE p_kind WHEN 'consume' THEN 'consumed' WHEN 'refund' THEN c.kind ELSE 'balance' END) THEN
        RETURN QUERY SELECT 'wrong-kind', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      IF NOT c.enabled THEN
        RETURN QUERY SELECT 'disabled', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      -- Lock order: the player's row → the inventory → the balance row.
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'player-not-found', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      SELECT ch.outcome, ch.inventory_id INTO v_chosen, v_inventory
        FROM hearth_choose_inventory(p_environment_id, p_player_id, c.scope, p_inventory_id, p_realm_given, p_realm_key) ch;
      IF v_chosen <> 'chosen' THEN
        RETURN QUERY SELECT v_chosen, c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      -- The balance row, made at 0 when missing, locked either way until the transaction ends.
      INSERT INTO balances AS b (inventory_id, currency_key, amount) VALUES (v_inventory, c.key, 0)
        ON CONFLICT (inventory_id, currency_key) DO UPDATE SET amount = b.amount
        RETURNING b.amount INTO v_held;
      -- What lowers the figure: a debit, and a refund of a consumed currency (what was spent goes down).
      IF p_kind = 'debit' OR (p_kind = 'refund' AND c.kind = 'consumed') THEN
        IF v_held < p_amount THEN
          RETURN QUERY SELECT 'insufficient-balance', c.kind, v_held, v_cap, v_inventory, NULL::bigint, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        v_change := -p_amount;
      ELSE
        IF p_kind = 'consume' AND v_held + p_amount > p_allowance THEN
          RETURN QUERY SELECT 'allowance-exceeded', c.kind, v_held, v_cap, v_inventory, NULL::bigint, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        IF v_held + p_amount > v_cap THEN
          RETURN QUERY SELECT 'balance-cap', c.kind, v_held, v_cap, v_inventory, NULL::bigint, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        v_change := p_amount;
      END IF;
      UPDATE balances SET amount = v_held + v_change WHERE balances.inventory_id = v_inventory AND currency_key = c.key;
      INSERT INTO ledger_entries (environment_id, player_id, inventory_id, currency_key, amount, balance_after, reason, reference)
        VALUES (p_environment_id, p_player_id, v_inventory, c.key, v_change, v_held + v_change, p_reason, p_reference)
        RETURNING id INTO v_entry;
      RETURN QUERY SELECT 'moved', c.kind, v_held, v_cap, v_inventory, v_entry, v_change, v_held + v_change;
    END
    $fn$;

    -- A refusal: the statement rolls back (and the caller's transaction with it); the outcome, as JSON
    -- in DETAIL, is what the service words (apps/core/src/economy/refusals.ts).
    CREATE FUNCTION hearth_refuse(p_outcome jsonb) RETURNS void
    LANGUAGE plpgsql AS $fn$
    BEGIN
      RAISE EXCEPTION USING ERRCODE = 'HM001', MESSAGE = p_outcome->>'outcome', DETAIL = p_outcome::text;
    END
    $fn$;

    -- A currency move's answer: the Movement (spec §2) when it moved, else refused.
    CREATE FUNCTION hearth_movement(
      m record, p_currency_key text, p_kind text, p_amount bigint, p_allowance bigint, p_field text
    ) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    BEGIN
      IF m.outcome <> 'moved' THEN
        PERFORM hearth_refuse(jsonb_build_object(
          'outcome', m.outcome, 'currencyKey', p_currency_key, 'kind', p_kind, 'currencyKind', m.currency_kind,
          'held', m.held, 'cap', m.cap, 'requested', p_amount, 'allowance', p_allowance, 'field', p_field));
      END IF;
      RETURN jsonb_build_object('transactionId', m.ledger_id::text, 'inventoryId', m.inventory_id, 'currencyKey', p_currency_key,
        'amount', m.change, 'balanceAfter', m.balance_after, 'replayed', false);
    END
    $fn$;

    -- Puts p_quantity of a type into an inventory the caller chose (the player held): a counted stack
    -- grows under its row lock; one-by-one items are made under the (inventory, type) grant lock, so
    -- maxOwned counts them with no parallel grant in between. Answers what was granted (rows as
    -- stored: the service maps them), or refuses owned-limit. already_granted: a grant under the same
    -- grantKey committed first (in parallel, or before).
    CREATE FUNCTION hearth_grant_items(
      p_environment_id bigint,
      p_player_id text,
      p_inventory_id text,
      t item_types,
      p_quantity bigint,
      p_grant_key text,
      p_data jsonb,
      p_max_balance bigint
    ) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_limit bigint := coalesce(t.max_owned, p_max_balance);
      v_after bigint;
      v_held bigint;
      v_items jsonb;
    BEGIN
      IF t.ownership = 'counted' THEN
        -- Up to the most it may hold (maxOwned, and never past 2^53-1). Refused, it changed nothing;
        -- the lock it took stays.
        INSERT INTO item_stacks AS s (inventory_id, item_type_key, quantity) VALUES (p_inventory_id, t.key, p_quantity)
          ON CONFLICT (inventory_id, item_type_key) DO UPDATE SET quantity = s.quantity + EXCLUDED.quantity
          WHERE s.quantity + EXCLUDED.quantity <= v_limit
          RETURNING s.quantity INTO v_after;
        IF v_after IS NULL THEN
          SELECT s.quantity INTO v_held FROM item_stacks s WHERE s.inventory_id = p_inventory_id AND s.item_type_key = t.key;
        ELSIF v_after > v_limit THEN
          -- A new stack made with more than it may hold: the refusal rolls it back.
          v_held := v_after - p_quantity;
        ELSE
          RETURN jsonb_build_object('outcome', 'granted', 'inventory_id', p_inventory_id, 'stack_quantity', v_after, 'items', '[]'::jsonb, 'already_granted', false);
        END IF;
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'owned-limit', 'itemTypeKey', t.key, 'held', v_held, 'requested', p_quantity, 'limit', v_limit));
      END IF;

      INSERT INTO item_grant_locks (inventory_id, item_type_key) VALUES (p_inventory_id, t.key)
        ON CONFLICT (inventory_id, item_type_key) DO UPDATE SET item_type_key = EXCLUDED.item_type_key;
      -- Under the lock a new statement sees every grant of this type here that committed before us.
      IF p_grant_key IS NOT NULL THEN
        SELECT jsonb_agg(to_jsonb(i)) INTO v_items FROM items i WHERE i.player_id = p_player_id AND i.item_type_key = t.key AND i.grant_key = p_grant_key;
        IF v_items IS NOT NULL THEN
          RETURN jsonb_build_object('outcome', 'granted', 'inventory_id', v_items->0->>'inventory_id', 'stack_quantity', NULL, 'items', v_items, 'already_granted', true);
        END IF;
      END IF;
      IF t.max_owned IS NOT NULL THEN
        SELECT count(*) INTO v_held FROM items i WHERE i.inventory_id = p_inventory_id AND i.item_type_key = t.key AND i.consumed_at IS NULL;
        IF v_held + p_quantity > t.max_owned THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'owned-limit', 'itemTypeKey', t.key, 'held', v_held, 'requested', p_quantity, 'limit', v_limit));
        END IF;
      END IF;
      -- A grantKey granted in another inventory in parallel: the unique index makes this insert wait for it, then insert nothing.
      WITH made AS (
        INSERT INTO items (id, environment_id, player_id, inventory_id, item_type_key, grant_key, data)
          SELECT hearth_random_id(), p_environment_id, p_player_id, p_inventory_id, t.key, p_grant_key, coalesce(p_data, '{}'::jsonb)
          FROM generate_series(1, p_quantity)
          ON CONFLICT (player_id, item_type_key, grant_key) DO NOTHING
          RETURNING *
      )
      SELECT jsonb_agg(to_jsonb(made) ORDER BY made.seq) INTO v_items FROM made;
      IF v_items IS NULL THEN
        SELECT jsonb_agg(to_jsonb(i)) INTO v_items FROM items i WHERE i.player_id = p_player_id AND i.item_type_key = t.key AND i.grant_key = p_grant_key;
        RETURN jsonb_build_object('outcome', 'granted', 'inventory_id', v_items->0->>'inventory_id', 'stack_quantity', NULL, 'items', v_items, 'already_granted', true);
      END IF;
      RETURN jsonb_build_object('outcome', 'granted', 'inventory_id', p_inventory_id, 'stack_quantity', NULL, 'items', v_items, 'already_granted', false);
    END
    $fn$;

    -- A purchase (docs/economy.md "Buying"): checks, then in lock order the item type FOR SHARE → the
    -- player → the inventories (the account's before a realm's) → the balance rows in currency-key
    -- order → the item rows. Answers the Purchase (charges; granted as stored rows).
    CREATE FUNCTION hearth_item_purchase(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      t item_types%ROWTYPE;
      c currencies%ROWTYPE;
      m record;
      v_home record;
      v_pay record;
      v_quantity bigint := coalesce((p_request->>'quantity')::bigint, 1);
      v_pay_with text := p_request->>'payWith';
      v_prices text[];
      v_price jsonb;
      v_charge jsonb;
      v_charges jsonb := '[]'::jsonb;
      v_movements jsonb := '[]'::jsonb;
      v_pays_on_account boolean := false;
      v_pay_inventory text;
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
      SELECT array_agg(p->>'currencyKey') INTO v_prices FROM jsonb_array_elements(t.prices) p;
      IF v_pay_with IS NOT NULL AND NOT (v_pay_with = ANY (v_prices)) THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'pay-with-unpriced', 'itemTypeKey', t.key, 'payWith', v_pay_with, 'prices', to_jsonb(v_prices)));
      END IF;
      IF t.price_rule = 'any' AND v_pay_with IS NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'pay-with-missing', 'itemTypeKey', t.key, 'prices', to_jsonb(v_prices)));
      END IF;
      -- The prices paid, in currency-key order (the balances' lock order), each multiplied by the quantity.
      FOR v_price IN
        SELECT p FROM jsonb_array_elements(t.prices) p
        WHERE t.price_rule = 'all' OR p->>'currencyKey' = v_pay_with
        ORDER BY p->>'currencyKey' COLLATE "C"
      LOOP
        SELECT * INTO c FROM currencies WHERE environment_id = p_environment_id AND key = v_price->>'currencyKey';
        -- A price in a currency the environment does not have makes the item not for sale, never free.
        IF NOT FOUND THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'price-currency-not-found', 'itemTypeKey', t.key, 'currencyKey', v_price->>'currencyKey'));
        END IF;
        IF NOT c.enabled THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'price-currency-disabled', 'itemTypeKey', t.key, 'currencyKey', c.key));
        END IF;
        IF c.kind = 'consumed' AND p_request->'allowances'->c.key IS NULL THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'allowance-missing', 'itemTypeKey', t.key, 'currencyKey', c.key));
        END IF;
        v_charges := v_charges || jsonb_build_object(
          'currencyKey', c.key, 'scope', c.scope, 'kind', CASE c.kind WHEN 'balance' THEN 'debit' ELSE 'consume' END,
          'cost', (v_price->>'amount')::bigint * v_quantity, 'allowance', p_request->'allowances'->c.key);
        v_pays_on_account := v_pays_on_account OR c.scope = 'account';
      END LOOP;

      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
      -- Inventories are made account first, then a realm's: two purchases making both cannot wait on each other.
      IF t.scope = 'account' OR v_pays_on_account THEN
        PERFORM 1 FROM hearth_choose_inventory(p_environment_id, p_player_id, 'account', NULL, false, NULL);
      END IF;
      SELECT * INTO v_home FROM hearth_choose_inventory(p_environment_id, p_player_id, t.scope,
        p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId');
      IF v_home.outcome <> 'chosen' THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', v_home.outcome, 'itemTypeKey', t.key,
          'field', CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END));
      END IF;
      FOR v_charge IN SELECT ch FROM jsonb_array_elements(v_charges) ch LOOP
        -- Paid from the inventory the items go to when the currency is held in that kind of place;
        -- otherwise from the account, or the current realm.
        IF (v_home.realm_key IS NULL) = (v_charge->>'scope' = 'account') THEN
          v_pay_inventory := v_home.inventory_id;
        ELSE
          SELECT * INTO v_pay FROM hearth_choose_inventory(p_environment_id, p_player_id, v_charge->>'scope', NULL, false, NULL);
          IF v_pay.outcome <> 'chosen' THEN
            PERFORM hearth_refuse(jsonb_build_object('outcome', v_pay.outcome, 'currencyKey', v_charge->>'currencyKey'));
          END IF;
          v_pay_inventory := v_pay.inventory_id;
        END IF;
        SELECT * INTO m FROM hearth_currency_move(p_environment_id, p_player_id, v_charge->>'currencyKey', v_charge->>'kind',
          (v_charge->>'cost')::bigint, (v_charge->>'allowance')::bigint, 'purchase', 'item:' || t.key, v_pay_inventory, false, NULL, p_max_balance);
        v_movements := v_movements || hearth_movement(m, v_charge->>'currencyKey', v_charge->>'kind', (v_charge->>'cost')::bigint, (v_charge->>'allowance')::bigint, 'inventoryId');
      END LOOP;
      -- Same statement: an owned-limit here rolls the charges back with it.
      RETURN jsonb_build_object('replayed', false, 'charges', v_movements,
        'granted', hearth_grant_items(p_environment_id, p_player_id, v_home.inventory_id, t, v_quantity, NULL, NULL, p_max_balance));
    END
    $fn$;

    -- The engine's one entry: a move of value by kind, answering what the API answers; a refusal raises HM001.
    CREATE FUNCTION hearth_move(p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
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
      END CASE;
    END
    $fn$;

    -- A move at most once per Idempotency-Key, in one statement (runIdempotent's rules,
    -- apps/core/src/idempotency.ts): the claim is INSERT … ON CONFLICT DO NOTHING, so a concurrent
    -- duplicate waits on the first's row until it commits, then (a new snapshot per statement) finds
    -- the record and replays what it kept, or is idempotency-conflict for another fingerprint. A
    -- refusal raises, rolling back the claim with the move: the key is free again.
    CREATE FUNCTION hearth_idempotent_move(
      p_scope text, p_key text, p_fingerprint text,
      p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint
    ) RETURNS TABLE (replayed boolean, answer jsonb)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_claimed text;
      v_fingerprint text;
      v_answer jsonb;
    BEGIN
      INSERT INTO idempotency_records (environment_id, scope, key, fingerprint)
        VALUES (p_environment_id, p_scope, p_key, p_fingerprint)
        ON CONFLICT (environment_id, scope, key) DO NOTHING
        RETURNING key INTO v_claimed;
      IF v_claimed IS NULL THEN
        SELECT r.fingerprint, r.body INTO v_fingerprint, v_answer FROM idempotency_records r
          WHERE r.environment_id = p_environment_id AND r.scope = p_scope AND r.key = p_key;
        IF v_fingerprint IS DISTINCT FROM p_fingerprint THEN
          PERFORM hearth_refuse('{"outcome":"idempotency-conflict"}'::jsonb);
        END IF;
        RETURN QUERY SELECT true, v_answer;
        RETURN;
      END IF;
      v_answer := hearth_move(p_environment_id, p_player_id, p_kind, p_request, p_max_balance);
      UPDATE idempotency_records SET status = 200, body = v_answer
        WHERE environment_id = p_environment_id AND scope = p_scope AND key = p_key;
      RETURN QUERY SELECT false, v_answer;
    END
    $fn$;

    -- Records kept by hearth_idempotent_currency_move hold its outcome row: the Movement it answered instead.
    UPDATE idempotency_records r SET body = jsonb_build_object('transactionId', le.id::text, 'inventoryId', le.inventory_id,
        'currencyKey', le.currency_key, 'amount', le.amount, 'balanceAfter', le.balance_after, 'replayed', false)
      FROM ledger_entries le
      WHERE r.body->>'outcome' = 'moved' AND r.body->>'ledger_id' IS NOT NULL AND le.id = (r.body->>'ledger_id')::bigint;
  `);
}

export async function down(): Promise<void> {
  throw new Error('20261126170000_money_engine cannot be undone: restore a backup taken before it');
}
