-- Written from MOVE_KINDS (apps/core/src/economy/move-kinds.ts) by `make sql`: change the list, not this file.
CREATE OR REPLACE FUNCTION public.hearth_move(p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    BEGIN
      CASE p_kind
        WHEN 'credit', 'debit', 'refund', 'consume' THEN
          RETURN hearth_move_currency(p_environment_id, p_player_id, p_kind, p_request, p_max_balance);
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
        WHEN 'skill-node-unlock' THEN
          RETURN hearth_skill_node_unlock(p_environment_id, p_player_id, p_request, p_max_balance);
        WHEN 'commerce-take-back' THEN
          RETURN hearth_commerce_take_back(p_environment_id, p_player_id, p_request);
      END CASE;
    END
    $function$;
