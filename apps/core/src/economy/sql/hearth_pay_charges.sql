CREATE OR REPLACE FUNCTION public.hearth_pay_charges(p_environment_id bigint, p_player_id text, p_charges jsonb, p_home_inventory text, p_home_realm text, p_realm_key text, p_reason text, p_reference text, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
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
    $function$;
