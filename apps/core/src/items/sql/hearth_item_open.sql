CREATE OR REPLACE FUNCTION public.hearth_item_open(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      i items%ROWTYPE;
      c item_types%ROWTYPE;
      t item_types%ROWTYPE;
      v_key text;
      v_pick jsonb;
      v_entry jsonb;
      v_total bigint;
      v_ticket bigint;
      v_drawn jsonb := '{}'::jsonb;
      v_home_realm text;
      v_place record;
      v_inventory text;
      v_quantity bigint;
      v_granted jsonb := '[]'::jsonb;
    BEGIN
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      i := hearth_lock_unconsumed_item(p_environment_id, p_player_id, p_request->>'itemId');
      SELECT * INTO c FROM item_types WHERE environment_id = p_environment_id AND key = i.item_type_key FOR SHARE;
      IF NOT FOUND OR c.category <> 'container' OR c.contents IS NULL OR jsonb_typeof(c.contents) <> 'object' THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'not-a-container', 'itemTypeKey', i.item_type_key));
      END IF;
      PERFORM hearth_check_held_type('item', c.key, c.enabled);
      PERFORM hearth_check_unlocked(p_player_id, c);
      -- Whether a container opens must not depend on the draw.
      FOR v_key IN
        SELECT k.key FROM (
          SELECT g->>'itemTypeKey' AS key FROM jsonb_array_elements(c.contents->'grants') g
          UNION SELECT e->>'itemTypeKey' FROM jsonb_array_elements(c.contents->'picks') p, jsonb_array_elements(p->'from') e
        ) k ORDER BY k.key COLLATE "C"
      LOOP
        SELECT * INTO t FROM item_types WHERE environment_id = p_environment_id AND key = v_key FOR SHARE;
        IF NOT FOUND OR NOT t.enabled THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'contents-unusable', 'container', c.key, 'itemTypeKey', v_key,
            'state', CASE WHEN FOUND THEN 'switched off' ELSE 'not defined' END));
        END IF;
      END LOOP;

      i := hearth_consume_item(i.id);
      -- Every fixed grant, and each pick's count independent draws: an entry comes up with
      -- probability weight / the sum of the pick's weights. Quantities of one type add up.
      FOR v_entry IN SELECT g FROM jsonb_array_elements(c.contents->'grants') g LOOP
        v_drawn := jsonb_set(v_drawn, ARRAY[v_entry->>'itemTypeKey'], to_jsonb(coalesce((v_drawn->>(v_entry->>'itemTypeKey'))::bigint, 0) + (v_entry->>'quantity')::bigint));
      END LOOP;
      FOR v_pick IN SELECT p FROM jsonb_array_elements(c.contents->'picks') p LOOP
        SELECT sum((e->>'weight')::bigint) INTO v_total FROM jsonb_array_elements(v_pick->'from') e;
        FOR n IN 1..(v_pick->>'count')::int LOOP
          v_ticket := hearth_random_below(v_total);
          FOR v_entry IN SELECT e FROM jsonb_array_elements(v_pick->'from') e LOOP
            v_ticket := v_ticket - (v_entry->>'weight')::bigint;
            IF v_ticket < 0 THEN
              v_drawn := jsonb_set(v_drawn, ARRAY[v_entry->>'itemTypeKey'], to_jsonb(coalesce((v_drawn->>(v_entry->>'itemTypeKey'))::bigint, 0) + (v_entry->>'quantity')::bigint));
              EXIT;
            END IF;
          END LOOP;
        END LOOP;
      END LOOP;

      SELECT inv.realm_key INTO v_home_realm FROM inventories inv WHERE inv.id = i.inventory_id;
      FOR v_key, v_quantity IN SELECT d.key, d.value::bigint FROM jsonb_each_text(v_drawn) d ORDER BY d.key COLLATE "C" LOOP
        SELECT * INTO t FROM item_types WHERE environment_id = p_environment_id AND key = v_key;
        -- Into the container's inventory when the content's scope allows that place, else where its scope puts it.
        IF (v_home_realm IS NULL) = (t.scope = 'account') THEN
          v_inventory := i.inventory_id;
        ELSE
          SELECT * INTO v_place FROM hearth_choose_inventory(p_environment_id, p_player_id, t.scope, NULL, false, NULL);
          IF v_place.outcome <> 'chosen' THEN
            PERFORM hearth_refuse(jsonb_build_object('outcome', v_place.outcome, 'itemTypeKey', t.key));
          END IF;
          v_inventory := v_place.inventory_id;
        END IF;
        v_granted := v_granted || (hearth_grant_items(p_environment_id, p_player_id, v_inventory, t, v_quantity, NULL, NULL, p_max_balance) - 'alreadyGranted');
      END LOOP;
      RETURN jsonb_build_object('itemTypeKey', i.item_type_key, 'item', hearth_item_json(i), 'granted', v_granted);
    END
    $function$;
