CREATE OR REPLACE FUNCTION public.hearth_currency_move(p_environment_id bigint, p_player_id text, p_currency_key text, p_kind text, p_amount bigint, p_allowance bigint, p_reason text, p_reference text, p_inventory_id text, p_realm_given boolean, p_realm_key text, p_max_balance bigint)
 RETURNS TABLE(outcome text, currency_kind text, held bigint, cap bigint, inventory_id text, ledger_id bigint, change bigint, balance_after bigint)
 LANGUAGE plpgsql
AS $function$
    #variable_conflict use_column
    DECLARE
      c currencies%ROWTYPE;
      v_cap bigint;
      v_chosen text;
      v_inventory text;
      v_held bigint;
      v_change bigint;
      v_entry bigint;
    BEGIN
      SELECT * INTO c FROM currencies WHERE environment_id = p_environment_id AND key = p_currency_key;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'currency-not-found', NULL::text, NULL::bigint, NULL::bigint, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      v_cap := least(coalesce(c.max, p_max_balance), p_max_balance);
      -- credit and debit move balance currencies, consume consumed ones, refund either.
      IF c.kind <> (CASE p_kind WHEN 'consume' THEN 'consumed' WHEN 'refund' THEN c.kind ELSE 'balance' END) THEN
        RETURN QUERY SELECT 'wrong-kind', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      IF NOT c.enabled THEN
        RETURN QUERY SELECT 'disabled', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      -- Lock order: the player's row → the inventory → the balance row.
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'player-not-found', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      SELECT ch.outcome, ch.inventory_id INTO v_chosen, v_inventory
        FROM hearth_choose_inventory(p_environment_id, p_player_id, c.scope, p_inventory_id, p_realm_given, p_realm_key) ch;
      IF v_chosen <> 'chosen' THEN
        RETURN QUERY SELECT v_chosen, c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      v_held := hearth_hold_balance(v_inventory, c.key);
      -- What lowers the figure: a debit, and a refund of a consumed currency (what was spent goes down).
      IF p_kind = 'debit' OR (p_kind = 'refund' AND c.kind = 'consumed') THEN
        IF v_held < p_amount THEN
          RETURN QUERY SELECT 'insufficient-balance', c.kind, v_held, v_cap, v_inventory, NULL::bigint, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        v_change := -p_amount;
      ELSE
        IF p_kind = 'consume' AND v_held + p_amount > p_allowance THEN
          RETURN QUERY SELECT 'allowance-exceeded', c.kind, v_held, v_cap, v_inventory, NULL::bigint, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        IF v_held + p_amount > v_cap THEN
          RETURN QUERY SELECT 'balance-cap', c.kind, v_held, v_cap, v_inventory, NULL::bigint, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        v_change := p_amount;
      END IF;
      SELECT w.ledger_id INTO v_entry FROM hearth_change_balance(p_environment_id, p_player_id, v_inventory, c.key, v_change, p_reason, p_reference) w;
      RETURN QUERY SELECT 'moved', c.kind, v_held, v_cap, v_inventory, v_entry, v_change, v_held + v_change;
    END
    $function$;
