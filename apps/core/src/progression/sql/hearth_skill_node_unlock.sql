CREATE OR REPLACE FUNCTION public.hearth_skill_node_unlock(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      node skill_nodes%ROWTYPE;
      v_realm text := p_request->>'realmId';
      v_claimed text;
      v_missing jsonb;
      v_charges jsonb;
      v_movements jsonb;
    BEGIN
      SELECT * INTO node FROM skill_nodes WHERE environment_id = p_environment_id AND key = p_request->>'nodeKey' FOR SHARE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'skill-node-not-found'));
      END IF;
      -- A switched-off tree's nodes are not unlocked (what players unlocked before stays). Read without a
      -- lock of the tree: a switch rewrites the tree's nodes after its row, so it waits on the node held
      -- FOR SHARE above and lands after this unlock (locking the tree too would invert that order).
      IF NOT (SELECT t.enabled FROM skill_trees t WHERE t.environment_id = p_environment_id AND t.key = node.tree_key) THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'skill-tree-disabled', 'nodeKey', node.key, 'treeKey', node.tree_key));
      END IF;
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      -- A realm named must exist, whether or not a price is paid there.
      IF v_realm IS NOT NULL AND NOT EXISTS (SELECT 1 FROM realms r WHERE r.environment_id = p_environment_id AND r.key = v_realm) THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'realm-not-found'));
      END IF;
      -- Claimed first: a parallel unlock of this node waits here until this one commits (then inserts
      -- nothing: already unlocked, nothing charged) or rolls back (then it claims the node itself).
      INSERT INTO player_skill_nodes (player_id, environment_id, node_key) VALUES (p_player_id, p_environment_id, node.key)
        ON CONFLICT (player_id, node_key) DO NOTHING RETURNING node_key INTO v_claimed;
      IF v_claimed IS NULL THEN
        RETURN jsonb_build_object('nodeKey', node.key, 'alreadyUnlocked', true, 'charges', '[]'::jsonb);
      END IF;
      -- Parents (skill nodes) first, then the unlocks the node requires (an unlock or a skill node), in the node's order.
      SELECT jsonb_agg(r.key ORDER BY r.pos) INTO v_missing FROM (
        SELECT p.key, p.pos, true AS is_parent FROM jsonb_array_elements_text(node.parents) WITH ORDINALITY AS p(key, pos)
        UNION ALL
        SELECT q.key, 1000 + q.pos, false FROM jsonb_array_elements_text(node.requires) WITH ORDINALITY AS q(key, pos)
      ) r
      WHERE NOT EXISTS (SELECT 1 FROM player_skill_nodes s WHERE s.player_id = p_player_id AND s.node_key = r.key)
        AND (r.is_parent OR NOT EXISTS (SELECT 1 FROM player_unlocks u WHERE u.player_id = p_player_id AND u.key = r.key));
      IF v_missing IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'skill-node-locked', 'nodeKey', node.key, 'missing', v_missing));
      END IF;

      -- The charges as a purchase's (hearth_price_charges, hearth_pay_charges): account currencies
      -- from the account, made first; realm currencies from realmId's realm, or the current one.
      v_charges := hearth_price_charges(p_environment_id, jsonb_build_object('nodeKey', node.key), node.price_rule, node.prices, 1, p_request);
      IF hearth_charges_on_account(v_charges) THEN
        PERFORM 1 FROM hearth_choose_inventory(p_environment_id, p_player_id, 'account', NULL, false, NULL);
      END IF;
      v_movements := hearth_pay_charges(p_environment_id, p_player_id, v_charges, NULL, NULL, v_realm, 'skill-node', 'skill-node:' || node.key, p_max_balance);
      RETURN jsonb_build_object('nodeKey', node.key, 'alreadyUnlocked', false, 'charges', v_movements);
    END
    $function$;
