CREATE OR REPLACE FUNCTION public.hearth_current_realm(p_environment_id bigint)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
      SELECT r.key FROM realms r
      WHERE r.environment_id = p_environment_id AND hearth_realm_open(r.enabled, r.start_at, r.end_at)
      ORDER BY r.start_at DESC, r.number DESC LIMIT 1
    $function$;
