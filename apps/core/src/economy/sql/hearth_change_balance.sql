CREATE OR REPLACE FUNCTION public.hearth_change_balance(p_environment_id bigint, p_player_id text, p_inventory_id text, p_currency_key text, p_change bigint, p_reason text, p_reference text, OUT ledger_id bigint, OUT balance_after bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_after bigint;
      v_entry bigint;
    BEGIN
      -- The one write of every currency move: the balance (held by the caller through
      -- hearth_hold_balance, the change already checked) and its ledger entry, in one shape.
      UPDATE balances b SET amount = b.amount + p_change WHERE b.inventory_id = p_inventory_id AND b.currency_key = p_currency_key
        RETURNING b.amount INTO v_after;
      INSERT INTO ledger_entries (environment_id, player_id, inventory_id, currency_key, amount, balance_after, reason, reference)
        VALUES (p_environment_id, p_player_id, p_inventory_id, p_currency_key, p_change, v_after, p_reason, p_reference)
        RETURNING id INTO v_entry;
      ledger_id := v_entry;
      balance_after := v_after;
    END
    $function$;
