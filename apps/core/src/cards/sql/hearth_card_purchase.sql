CREATE OR REPLACE FUNCTION public.hearth_card_purchase(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      t card_types%ROWTYPE;
      v_as_stack boolean := coalesce(p_request->>'as', 'instance') = 'stack';
      v_home record;
      v_charges jsonb;
      v_movements jsonb;
    BEGIN
      t := hearth_card_type_on(p_environment_id, p_request->>'cardTypeKey');
      PERFORM hearth_check_held_type('card', t.key, t.enabled, p_purchasable => t.purchasable);
      -- A stack counts cards of a type: it has no template and no data of its own.
      IF v_as_stack AND (p_request->'cardTemplateKey' IS NOT NULL OR p_request->'data' IS NOT NULL) THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'stack-card-fields', 'cardTypeKey', t.key,
          'field', CASE WHEN p_request->'cardTemplateKey' IS NOT NULL THEN 'cardTemplateKey' ELSE 'data' END));
      END IF;
      PERFORM hearth_check_card_template(p_environment_id, p_request->>'cardTemplateKey');
      v_charges := hearth_price_charges(p_environment_id, jsonb_build_object('cardTypeKey', t.key), t.price_rule, t.prices, 1, p_request);

      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      IF hearth_charges_on_account(v_charges) THEN
        PERFORM 1 FROM hearth_choose_inventory(p_environment_id, p_player_id, 'account', NULL, false, NULL);
      END IF;
      v_home := hearth_choose_card_inventory(p_environment_id, p_player_id, p_request, t.key);
      v_movements := hearth_pay_charges(p_environment_id, p_player_id, v_charges, v_home.inventory_id, v_home.realm_key, NULL, 'purchase', 'card:' || t.key, p_max_balance);
      RETURN jsonb_build_object('replayed', false, 'charges', v_movements, 'granted',
        CASE WHEN v_as_stack THEN hearth_add_card_stack(v_home.inventory_id, t.key, 1, p_max_balance)
          ELSE hearth_grant_card(p_environment_id, p_player_id, v_home.inventory_id, t.key, p_request->>'cardTemplateKey', NULL, p_request->'data') END);
    END
    $function$;
