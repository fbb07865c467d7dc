/**
 * The money engine's kinds of move, ONE list: each kind and the function that makes it. The
 * TypeScript kinds (`EngineMoveKind`) and the database's dispatcher (economy/sql/hearth_move.sql,
 * written from this list by `make sql`; test/core/move-kinds.test.ts fails while it differs) both
 * come from it. A new kind of move is a line here and its function's file.
 */

/** What a kind's function is given, from hearth_move's own parameters (or a constant). */
type MoveArgument = 'environment' | 'player' | 'kind' | 'request' | 'maxBalance' | boolean;

interface MoveKindDefinition {
  /** The function (a file of apps/core/src/<area>/sql/) that makes the move and answers it as jsonb. */
  fn: string;
  args: readonly MoveArgument[];
}

const CURRENCY = { fn: 'hearth_move_currency', args: ['environment', 'player', 'kind', 'request', 'maxBalance'] } as const;
const WITH_CAP = ['environment', 'player', 'request', 'maxBalance'] as const;
const WITHOUT_CAP = ['environment', 'player', 'request'] as const;

export const MOVE_KINDS = {
  // currencies: the route is the direction
  credit: CURRENCY,
  debit: CURRENCY,
  refund: CURRENCY,
  consume: CURRENCY,
  // items
  'item-purchase': { fn: 'hearth_item_purchase', args: WITH_CAP },
  'item-grant': { fn: 'hearth_item_grant', args: WITH_CAP },
  'item-consume': { fn: 'hearth_item_consume', args: [...WITHOUT_CAP, false] },
  'item-use': { fn: 'hearth_item_consume', args: [...WITHOUT_CAP, true] },
  'stack-consume': { fn: 'hearth_stack_consume', args: [...WITHOUT_CAP, false] },
  'stack-use': { fn: 'hearth_stack_consume', args: [...WITHOUT_CAP, true] },
  'item-open': { fn: 'hearth_item_open', args: WITH_CAP },
  // cards
  'card-grant': { fn: 'hearth_card_grant', args: WITHOUT_CAP },
  'card-consume': { fn: 'hearth_card_consume', args: WITHOUT_CAP },
  'card-stack-grant': { fn: 'hearth_card_stack_grant', args: WITH_CAP },
  'card-stack-consume': { fn: 'hearth_card_stack_consume', args: WITHOUT_CAP },
  'card-purchase': { fn: 'hearth_card_purchase', args: WITH_CAP },
  // progression
  'skill-node-unlock': { fn: 'hearth_skill_node_unlock', args: WITH_CAP },
  // commerce: an order's grant taken back after a refund or chargeback
  'commerce-take-back': { fn: 'hearth_commerce_take_back', args: WITHOUT_CAP },
} as const satisfies Record<string, MoveKindDefinition>;

/** The engine's kinds of move. */
export type EngineMoveKind = keyof typeof MOVE_KINDS;

const PARAMETER: Record<Exclude<MoveArgument, boolean>, string> = {
  environment: 'p_environment_id',
  player: 'p_player_id',
  kind: 'p_kind',
  request: 'p_request',
  maxBalance: 'p_max_balance',
};

/** economy/sql/hearth_move.sql as the list makes it: one branch per function call, its kinds together. */
export function dispatcherSql(): string {
  const branches = new Map<string, string[]>();
  for (const [kind, { fn, args }] of Object.entries(MOVE_KINDS) as [string, MoveKindDefinition][]) {
    const call = `${fn}(${args.map((arg) => (typeof arg === 'boolean' ? String(arg) : PARAMETER[arg])).join(', ')})`;
    branches.set(call, [...(branches.get(call) ?? []), kind]);
  }
  const cases = [...branches].map(([call, kinds]) => `        WHEN ${kinds.map((k) => `'${k}'`).join(', ')} THEN\n          RETURN ${call};`);
  return [
    '-- Written from MOVE_KINDS (apps/core/src/economy/move-kinds.ts) by `make sql`: change the list, not this file.',
    'CREATE OR REPLACE FUNCTION public.hearth_move(p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint)',
    ' RETURNS jsonb',
    ' LANGUAGE plpgsql',
    'AS $function$',
    '    BEGIN',
    '      CASE p_kind',
    ...cases,
    '      END CASE;',
    '    END',
    '    $function$;',
    '',
  ].join('\n');
}
