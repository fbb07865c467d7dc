CREATE OR REPLACE FUNCTION public.hearth_refuse(p_outcome jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    BEGIN
      RAISE EXCEPTION USING ERRCODE = 'HM001', MESSAGE = p_outcome->>'outcome', DETAIL = p_outcome::text;
    END
    $function$;
