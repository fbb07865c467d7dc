CREATE OR REPLACE FUNCTION public.hearth_iso_time(p_at timestamptz)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
      -- A time as every answer gives it, as JavaScript's toISOString writes it: UTC, to the millisecond.
      SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    $function$;
