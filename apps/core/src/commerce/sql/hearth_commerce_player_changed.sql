CREATE OR REPLACE FUNCTION public.hearth_commerce_player_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      -- PostgreSQL sends one notice per distinct payload per transaction, at commit.
      PERFORM pg_notify('hearth_commerce_player_changed', CASE WHEN TG_OP = 'DELETE' THEN OLD.player_id ELSE NEW.player_id END);
      RETURN NULL;
    END $function$;
