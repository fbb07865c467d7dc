CREATE OR REPLACE FUNCTION public.hearth_charges_on_account(p_charges jsonb)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
      SELECT EXISTS (SELECT 1 FROM jsonb_array_elements(p_charges) ch WHERE ch->>'scope' = 'account')
    $function$;
