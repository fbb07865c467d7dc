CREATE OR REPLACE FUNCTION public.hearth_commerce_take_back(p_environment_id bigint, p_player_id text, p_request jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_order text := p_request->>'orderId';
      v_reason text := p_request->>'reason';
      g record;
      it record;
      v_item record;
      v_items jsonb := '[]'::jsonb;
      v_held bigint;
      v_taken bigint;
      v_entry bigint;
      v_currencies jsonb := '[]'::jsonb;
      -- Whether the order's grant recorded its currencies (this release's grants, and older ones backfilled).
      v_recorded boolean := (SELECT o.currency_grants_recorded FROM commerce_orders o WHERE o.id = p_request->>'orderId');
    BEGIN
      -- Taken through the pieces every currency and item move writes with (hearth_hold_balance and
      -- hearth_change_balance, hearth_hold_stack and hearth_take_from_stack, hearth_consume_item), in
      -- their lock order: the player, then each balance, stack and item. Not through the moves
      -- themselves (hearth_currency_move, hearth_stack_consume), which first check the currency or
      -- item type as it is defined now and choose the inventory: a refund must always settle, so a
      -- currency or item type switched off, made unusable or removed since the grant does not stop it,
      -- and what was given is taken from the inventory the grant recorded. Nor their refusal of
      -- insufficient funds: what the player no longer holds is a shortfall, never a negative balance.
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      -- What the grant credited, as the order recorded it with the grant (never the product as it reads
      -- now, nor the ledger searched by reason and reference).
      FOR g IN
        SELECT cg.inventory_id, cg.currency_key, cg.amount AS given FROM commerce_order_currency_grants cg
          WHERE cg.order_id = v_order
            AND v_recorded
        UNION ALL
        -- An order the previous release completed (a rolling upgrade): its grant left no record; the ledger, as that release read it.
        SELECT le.inventory_id, le.currency_key, sum(le.amount)::bigint FROM ledger_entries le
          WHERE NOT v_recorded
            AND le.player_id = p_player_id AND le.environment_id = p_environment_id AND le.reason = 'commerce' AND le.reference = v_order AND le.amount > 0
          GROUP BY le.inventory_id, le.currency_key
        ORDER BY 1, 2
      LOOP
        v_held := hearth_hold_balance(g.inventory_id, g.currency_key);
        v_taken := least(v_held, g.given);
        v_entry := NULL;
        IF v_taken > 0 THEN
          SELECT w.ledger_id INTO v_entry FROM hearth_change_balance(p_environment_id, p_player_id, g.inventory_id, g.currency_key, -v_taken, v_reason, v_order) w;
        END IF;
        IF v_taken < g.given THEN
          INSERT INTO commerce_take_back_shortfalls (environment_id, player_id, order_id, currency_key, inventory_id, owed, taken, reason)
            VALUES (p_environment_id, p_player_id, v_order, g.currency_key, g.inventory_id, g.given, v_taken, v_reason);
        END IF;
        v_currencies := v_currencies || jsonb_build_object('currencyKey', g.currency_key, 'inventoryId', g.inventory_id, 'given', g.given,
          'taken', v_taken, 'shortfall', g.given - v_taken, 'balanceAfter', v_held - v_taken, 'transactionId', v_entry::text);
      END LOOP;
      FOR it IN
        SELECT * FROM commerce_order_item_grants oig WHERE oig.order_id = v_order ORDER BY oig.inventory_id, oig.item_type_key
      LOOP
        IF it.item_ids IS NULL THEN
          v_taken := least(hearth_hold_stack('item', it.inventory_id, it.item_type_key), it.quantity);
          IF v_taken > 0 THEN
            PERFORM hearth_take_from_stack(it.inventory_id, it.item_type_key, v_taken);
          END IF;
        ELSE
          -- The grant's items not consumed yet, locked in their order (seq), as every move that locks several items.
          v_taken := 0;
          FOR v_item IN
            SELECT i.id FROM items i WHERE i.id = ANY (it.item_ids) AND i.player_id = p_player_id AND i.consumed_at IS NULL ORDER BY i.seq FOR UPDATE
          LOOP
            PERFORM hearth_consume_item(v_item.id);
            v_taken := v_taken + 1;
          END LOOP;
        END IF;
        IF v_taken < it.quantity THEN
          INSERT INTO commerce_take_back_shortfalls (environment_id, player_id, order_id, item_type_key, inventory_id, owed, taken, reason)
            VALUES (p_environment_id, p_player_id, v_order, it.item_type_key, it.inventory_id, it.quantity, v_taken, v_reason);
        END IF;
        v_items := v_items || jsonb_build_object('itemTypeKey', it.item_type_key, 'inventoryId', it.inventory_id, 'given', it.quantity,
          'taken', v_taken, 'shortfall', it.quantity - v_taken);
      END LOOP;
      RETURN jsonb_build_object('orderId', v_order, 'currencies', v_currencies, 'items', v_items, 'replayed', false);
    END
    $function$;
