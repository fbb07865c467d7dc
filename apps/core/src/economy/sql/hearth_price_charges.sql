CREATE OR REPLACE FUNCTION public.hearth_price_charges(p_environment_id bigint, p_subject jsonb, p_price_rule text, p_prices jsonb, p_quantity bigint, p_request jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      c currencies%ROWTYPE;
      v_pay_with text := p_request->>'payWith';
      v_prices text[];
      v_price jsonb;
      v_charges jsonb := '[]'::jsonb;
    BEGIN
      SELECT array_agg(p->>'currencyKey') INTO v_prices FROM jsonb_array_elements(p_prices) p;
      IF v_pay_with IS NOT NULL AND NOT (v_pay_with = ANY (coalesce(v_prices, '{}'))) THEN
        PERFORM hearth_refuse(p_subject || jsonb_build_object('outcome', 'pay-with-unpriced', 'payWith', v_pay_with, 'prices', coalesce(to_jsonb(v_prices), '[]'::jsonb)));
      END IF;
      IF p_price_rule = 'any' AND v_pay_with IS NULL THEN
        PERFORM hearth_refuse(p_subject || jsonb_build_object('outcome', 'pay-with-missing', 'prices', coalesce(to_jsonb(v_prices), '[]'::jsonb)));
      END IF;
      FOR v_price IN
        SELECT p FROM jsonb_array_elements(p_prices) p
        WHERE p_price_rule = 'all' OR p->>'currencyKey' = v_pay_with
        ORDER BY p->>'currencyKey' COLLATE "C"
      LOOP
        SELECT * INTO c FROM currencies WHERE environment_id = p_environment_id AND key = v_price->>'currencyKey';
        -- A price in a currency the environment does not have makes the thing not for sale, never free.
        IF NOT FOUND THEN
          PERFORM hearth_refuse(p_subject || jsonb_build_object('outcome', 'price-currency-not-found', 'currencyKey', v_price->>'currencyKey'));
        END IF;
        IF NOT c.enabled THEN
          PERFORM hearth_refuse(p_subject || jsonb_build_object('outcome', 'price-currency-disabled', 'currencyKey', c.key));
        END IF;
        IF c.kind = 'consumed' AND p_request->'allowances'->c.key IS NULL THEN
          PERFORM hearth_refuse(p_subject || jsonb_build_object('outcome', 'allowance-missing', 'currencyKey', c.key));
        END IF;
        v_charges := v_charges || jsonb_build_object(
          'currencyKey', c.key, 'scope', c.scope, 'kind', CASE c.kind WHEN 'balance' THEN 'debit' ELSE 'consume' END,
          'cost', (v_price->>'amount')::bigint * p_quantity, 'allowance', p_request->'allowances'->c.key);
      END LOOP;
      RETURN v_charges;
    END
    $function$;
