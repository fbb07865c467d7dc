CREATE OR REPLACE FUNCTION public.hearth_random_below(p_below bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_span constant bigint := 281474976710656; -- 2^48
      v_limit bigint := v_span - v_span % p_below;
      v_value bigint;
    BEGIN
      LOOP
        v_value := ('x' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12))::bit(48)::bigint;
        IF v_value < v_limit THEN
          RETURN v_value % p_below;
        END IF;
      END LOOP;
    END
    $function$;
