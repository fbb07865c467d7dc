CREATE OR REPLACE FUNCTION public.hearth_hold_balance(p_inventory_id text, p_currency_key text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_held bigint;
    BEGIN
      -- The balance row, made at 0 when missing, locked either way until the transaction ends: what
      -- every currency move (and a store order's take-back) holds before it decides, so the figure it
      -- decides on is the one it changes.
      INSERT INTO balances AS b (inventory_id, currency_key, amount) VALUES (p_inventory_id, p_currency_key, 0)
        ON CONFLICT (inventory_id, currency_key) DO UPDATE SET amount = b.amount
        RETURNING b.amount INTO v_held;
      RETURN v_held;
    END
    $function$;
