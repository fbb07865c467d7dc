CREATE OR REPLACE FUNCTION public.hearth_choose_inventory(p_environment_id bigint, p_player_id text, p_scope text, p_inventory_id text, p_realm_given boolean, p_realm_key text, OUT outcome text, OUT inventory_id text, OUT realm_key text)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
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
    $function$;
