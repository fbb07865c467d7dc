CREATE OR REPLACE FUNCTION public.hearth_check_held_type(p_held text, p_type_key text, p_enabled boolean, p_purchasable boolean DEFAULT true)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    -- The switches of the item or card type a move acts on (p_held: 'item', 'card'), in the order
    -- every move refuses them: not for sale (a purchase passes its type's purchasable), then switched
    -- off. A refusal names the type as <held>TypeKey; its object is built only when refusing.
    BEGIN
      IF NOT p_purchasable THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'not-purchasable', p_held || 'TypeKey', p_type_key));
      END IF;
      IF p_enabled THEN
        RETURN;
      ELSIF p_held = 'item' THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-type-disabled', 'itemTypeKey', p_type_key));
      ELSE
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-type-disabled', 'cardTypeKey', p_type_key));
      END IF;
    END
    $function$;
