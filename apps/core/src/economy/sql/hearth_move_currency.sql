CREATE OR REPLACE FUNCTION public.hearth_move_currency(p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      m record;
    BEGIN
      -- A currency move (credit, debit, refund, consume) as hearth_move is asked it: the request's
      -- fields to hearth_currency_move, its row answered as a Movement (or refused).
      SELECT * INTO m FROM hearth_currency_move(p_environment_id, p_player_id, p_request->>'currencyKey', p_kind,
        (p_request->>'amount')::bigint, (p_request->>'allowance')::bigint, p_request->>'reason', p_request->>'reference',
        p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId', p_max_balance);
      RETURN hearth_movement(m, p_request->>'currencyKey', p_kind, (p_request->>'amount')::bigint, (p_request->>'allowance')::bigint,
        CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END);
    END
    $function$;
