CREATE OR REPLACE FUNCTION public.hearth_movement(m record, p_currency_key text, p_kind text, p_amount bigint, p_allowance bigint, p_field text)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF m.outcome <> 'moved' THEN
        PERFORM hearth_refuse(jsonb_build_object(
          'outcome', m.outcome, 'currencyKey', p_currency_key, 'kind', p_kind, 'currencyKind', m.currency_kind,
          'held', m.held, 'cap', m.cap, 'requested', p_amount, 'allowance', p_allowance, 'field', p_field));
      END IF;
      RETURN jsonb_build_object('transactionId', m.ledger_id::text, 'inventoryId', m.inventory_id, 'currencyKey', p_currency_key,
        'amount', m.change, 'balanceAfter', m.balance_after, 'replayed', false);
    END
    $function$;
