CREATE OR REPLACE FUNCTION public.hearth_realm_open(p_enabled boolean, p_start_at timestamp with time zone, p_end_at timestamp with time zone)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
      SELECT p_enabled AND p_start_at <= now() AND (p_end_at IS NULL OR p_end_at > now())
    $function$;
