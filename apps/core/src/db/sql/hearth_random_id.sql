CREATE OR REPLACE FUNCTION public.hearth_random_id()
 RETURNS text
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_alphabet constant text := '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
      v_id text := '';
      v_bytes bytea;
      v_byte int;
    BEGIN
      WHILE length(v_id) < 22 LOOP
        v_bytes := decode(replace(gen_random_uuid()::text, '-', ''), 'hex');
        -- A version 4 uuid: bytes 6 and 8 carry fixed bits, the other 14 are random.
        FOR i IN 0..15 LOOP
          CONTINUE WHEN i = 6 OR i = 8;
          v_byte := get_byte(v_bytes, i);
          -- 248 = 4 * 62: rejecting the top values keeps the distribution uniform.
          IF v_byte < 248 AND length(v_id) < 22 THEN
            v_id := v_id || substr(v_alphabet, v_byte % 62 + 1, 1);
          END IF;
        END LOOP;
      END LOOP;
      RETURN v_id;
    END
    $function$;
