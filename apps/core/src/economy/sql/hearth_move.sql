CREATE OR REPLACE FUNCTION public.hearth_move(p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
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
        -- commerce
        WHEN 'commerce-take-back' THEN
          RETURN hearth_commerce_take_back(p_environment_id, p_player_id, p_request);
      END CASE;
    END
    $function$;
