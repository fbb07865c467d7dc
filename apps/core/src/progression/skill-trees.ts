/**
 * Skill trees (spec §2 SkillTree, §3 Skill node, §4 Progression and Definitions; docs/progression.md).
 * Written by SkillTree manifests (syncSkillTree / releaseSkillTree, called by the reconciler), read by
 * servers through GET /definitions/skill-trees and by players and servers through a player's trees
 * (from memory: content/definition-snapshots.ts), unlocked through the money engine
 * (`hearth_skill_node_unlock`, one statement with its charges).
 *
 * Each write bumps the environment's `skill-trees` content version and announces `content` after the
 * commit, so every process drops its copy at once.
 */
import { sameJson } from '../canonical-json';
import type { Db, Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { type Announcer, type InvalidationBus } from '../invalidation';
import { contentChanged } from '../content/game-config';
import { lockContentWriter, refuseKeyOfAnother, releaseContent, releaseOwnedRows } from '../content/owned-row';
import type { ContentSources } from '../content/content-watch';
import { DefinitionSnapshots } from '../content/definition-snapshots';
import type { CursorCodec, Page } from '../pagination';
import type { Resource } from '../contract/resources';
import type { SkillTreeSpecT } from '../contract/skill-tree';
import { GAME_KEY_MAX, isGameKey } from '../contract/game-keys';
import type { EnvironmentContext } from '../tenancy/environments';
import type { IdempotencyScope } from '../idempotency';
import { type EngineAnswer, runEngineMove } from '../economy/engine';
import { type Sender, type SenderRule, checkSender } from '../economy/senders';
import type { SkillNode, SkillNodeDefinition, SkillNodeUnlock, SkillTree, SkillTreeDefinition } from '../shapes';
import type { PageRequest } from '../shapes/common';
export type { SkillNode, SkillNodeDefinition, SkillNodeUnlock, SkillTree, SkillTreeDefinition } from '../shapes';

/** The content version kind of skill trees (content_versions.kind). */
export const SKILL_TREES_CONTENT = 'skill-trees';

/** A node as stored: its definition and the unlocks it requires besides its parents (not answered: spec §2's fields are fixed). */
interface StoredNode extends SkillNodeDefinition {
  requires: string[];
}
interface StoredTree extends Omit<SkillTreeDefinition, 'nodes'> {
  nodes: StoredNode[];
}

/** The tree a validated document declares (its defaults filled by validation: spec/fields.ts), keys resolved. */
export function skillTreeDefinitionOf(doc: Resource<SkillTreeSpecT>): StoredTree {
  const s = doc.spec;
  const key = s.key ?? doc.metadata.name;
  return {
    key,
    name: s.name,
    description: s.description,
    hidden: s.hidden,
    enabled: s.enabled,
    nodes: s.nodes.map((n) => ({
      key: n.key,
      treeKey: key,
      name: n.name,
      description: n.description,
      icon: n.icon ?? null,
      priceRule: n.priceRule,
      parents: [...n.parents],
      prices: n.prices.map((p) => ({ currencyKey: p.currencyKey, amount: p.amount })),
      requires: [...n.requires],
    })),
  };
}

/**
 * What CEL cannot say cheaply: a key taken from metadata.name must still be a key, and no node is
 * its own ancestor (parents form no cycle). The CEL rules (spec/skill-tree.ts) already hold that
 * parents are nodes of the tree, so every parent named here is a node.
 */
export function checkSkillTree(tree: StoredTree): void {
  if (!isGameKey(tree.key)) {
    throw refuse.invalid('key', `"${tree.key}" is not a skill tree key (1-${GAME_KEY_MAX} letters, digits and . _ : -); give spec.key`);
  }
  const index = new Map(tree.nodes.map((n, i) => [n.key, i]));
  // Depth-first: a node met again while still on the path closes a cycle.
  const state = new Array<'open' | 'done' | undefined>(tree.nodes.length);
  const visit = (i: number, path: string[]): void => {
    if (state[i] === 'done') return;
    if (state[i] === 'open') {
      const cycle = [...path.slice(path.indexOf(tree.nodes[i].key)), tree.nodes[i].key];
      throw refuse.invalid(`nodes.${i}.parents`, `form a cycle: ${cycle.join(' → ')}`);
    }
    state[i] = 'open';
    for (const parent of tree.nodes[i].parents) {
      const p = index.get(parent);
      if (p !== undefined) visit(p, [...path, tree.nodes[i].key]);
    }
    state[i] = 'done';
  };
  tree.nodes.forEach((_, i) => visit(i, []));
}

function nodeRow(environmentId: number, node: StoredNode, position: number) {
  return {
    environment_id: environmentId,
    key: node.key,
    tree_key: node.treeKey,
    position,
    name: node.name,
    description: node.description,
    icon: node.icon,
    price_rule: node.priceRule,
    parents: JSON.stringify(node.parents),
    prices: JSON.stringify(node.prices),
    requires: JSON.stringify(node.requires),
  };
}

function nodeOf(row: Record<string, any>): StoredNode {
  return {
    key: row.key,
    treeKey: row.tree_key,
    name: row.name,
    description: row.description,
    icon: row.icon ?? null,
    priceRule: row.price_rule,
    parents: row.parents,
    prices: row.prices,
    requires: row.requires,
  };
}

/** Every tree of the environment by key, each with its nodes in the tree's order. */
async function loadTrees(db: Queryable, environmentId: number, where: Record<string, unknown> = {}): Promise<(StoredTree & { owner: string })[]> {
  const trees = await db('skill_trees')
    .where({ environment_id: environmentId, ...where })
    .orderBy('key');
  if (trees.length === 0) return [];
  const nodes = await db('skill_nodes')
    .where({ environment_id: environmentId })
    .whereIn(
      'tree_key',
      trees.map((t) => t.key as string),
    )
    .orderBy([{ column: 'tree_key' }, { column: 'position' }]);
  const byTree = new Map<string, StoredNode[]>();
  for (const row of nodes) {
    const list = byTree.get(row.tree_key) ?? [];
    list.push(nodeOf(row));
    byTree.set(row.tree_key, list);
  }
  return trees.map((t) => ({
    key: t.key,
    owner: t.owner,
    name: t.name,
    description: t.description,
    hidden: t.hidden,
    enabled: t.enabled,
    nodes: byTree.get(t.key) ?? [],
  }));
}

/** Where the rows of these documents are kept, for the owned-row rules (content/owned-row.ts). */
const SKILL_TREE_ROWS = { name: 'skill_trees', keyColumn: 'key', keyField: 'key', kind: 'SkillTree' };

/**
 * Makes the tree `owner` declares exactly `tree` in the environment. A tree key of another document
 * is refused (`conflict` on `key`), and so is a node key another tree of the environment holds
 * (`conflict` on `nodes.<i>.key`, naming that tree). Nothing changes (and no version moves) when
 * nothing differs. What players unlocked stays, whatever the tree becomes.
 */
export async function syncSkillTree(
  db: Queryable,
  bus: Announcer,
  target: { environmentId: number; owner: string; tree: StoredTree },
): Promise<'created' | 'updated' | 'unchanged'> {
  const { environmentId, owner, tree } = target;
  checkSkillTree(tree);
  return inTransaction(db, async (trx) => {
    await lockContentWriter(trx, environmentId);
    const beforeRow = await trx('skill_trees').where({ owner }).first();
    const moved = beforeRow && (Number(beforeRow.environment_id) !== environmentId || beforeRow.key !== tree.key);
    if (beforeRow && !moved) {
      const [before] = await loadTrees(trx, environmentId, { owner });
      const { owner: _owner, ...stored } = before;
      if (sameJson(stored, tree)) return 'unchanged';
    }
    await refuseKeyOfAnother(trx, SKILL_TREE_ROWS, environmentId, tree.key, owner);
    const claimed = await trx('skill_nodes as n')
      .join('skill_trees as t', function joinTree() {
        this.on('t.environment_id', 'n.environment_id').andOn('t.key', 'n.tree_key');
      })
      .where('n.environment_id', environmentId)
      .whereIn(
        'n.key',
        tree.nodes.map((n) => n.key),
      )
      .whereNot('t.owner', owner)
      .select('n.key', 't.key as tree_key', 't.owner');
    if (claimed.length > 0) {
      const i = tree.nodes.findIndex((n) => n.key === claimed[0].key);
      throw refuse.conflict(
        `"${claimed[0].key}" is a node of skill tree ${claimed[0].tree_key} (SkillTree ${claimed[0].owner}): node keys are unique across an environment`,
        { field: `nodes.${i}.key` },
      );
    }
    if (moved) {
      await trx('skill_trees').where({ owner }).delete();
      if (Number(beforeRow.environment_id) !== environmentId) await contentChanged(trx, bus, Number(beforeRow.environment_id), SKILL_TREES_CONTENT);
    }
    const values = { name: tree.name, description: tree.description, hidden: tree.hidden, enabled: tree.enabled, updated_at: trx.raw('clock_timestamp()') };
    if (beforeRow && !moved) {
      await trx('skill_trees').where({ owner }).update(values);
      await trx('skill_nodes').where({ environment_id: environmentId, tree_key: tree.key }).delete();
    } else {
      await trx('skill_trees').insert({ environment_id: environmentId, key: tree.key, owner, ...values });
    }
    await trx('skill_nodes').insert(tree.nodes.map((n, i) => nodeRow(environmentId, n, i)));
    await contentChanged(trx, bus, environmentId, SKILL_TREES_CONTENT);
    return beforeRow ? 'updated' : 'created';
  });
}

/** Removes the tree `owner` declared (its document was deleted), with its nodes; answers whether there was one. What players unlocked stays. */
export async function releaseSkillTree(db: Queryable, bus: Announcer, owner: string): Promise<boolean> {
  return releaseContent(db, bus, SKILL_TREES_CONTENT, (trx) => releaseOwnedRows(trx, SKILL_TREE_ROWS.name, owner));
}

/** A node's definition as answered: without `requires` (spec §2's node fields are fixed). */
function nodeDefinition({ requires: _requires, ...node }: StoredNode): SkillNodeDefinition {
  return node;
}

/** The body of POST /players/:playerId/skill-nodes/:nodeKey/unlock. */
export interface SkillNodeUnlockRequest {
  /** The realm whose inventory pays realm currencies (the current realm when absent). */
  realmId?: string | null;
  /** priceRule `any`: the currency of the price to pay. */
  payWith?: string;
  /** Server key only: the allowance per consumed currency key. */
  allowances?: Record<string, number>;
}

/**
 * An allowance is the game server's word on what the player may spend, as a purchase's; and a game of
 * the service's own whose skill trees the game itself unlocks keeps every unlock to its servers.
 */
const UNLOCK_SENDERS: SenderRule<SkillNodeUnlockRequest> = {
  serverOnly: ['allowances'],
  playerRefused: (env) =>
    env.skillNodesUnlockedBy === 'game' ? "This game's skill nodes are unlocked by the game itself, not by a player's token." : undefined,
};

export class SkillTreeService {
  private readonly trees: DefinitionSnapshots<StoredTree>;

  /** `pool` serves the snapshots only: shared by every request of the process, they hold committed data. */
  constructor(content: ContentSources) {
    this.trees = new DefinitionSnapshots(content, SKILL_TREES_CONTENT, (db, envId) => loadTrees(db, envId));
  }

  etag(envId: number, ask: string): Promise<string> {
    return this.trees.etag(envId, ask);
  }

  /** GET /definitions/skill-trees: every tree by key, hidden and switched-off ones included, each node with its parents and prices. */
  async listDefinitions(env: EnvironmentContext, q: PageRequest): Promise<Page<SkillTreeDefinition>> {
    const { definitions } = await this.trees.snapshot(env.id);
    return this.trees.page(definitions, `skill-trees|${env.id}`, q, (t) => ({
      key: t.key,
      name: t.name,
      description: t.description,
      hidden: t.hidden,
      enabled: t.enabled,
      nodes: t.nodes.map(nodeDefinition),
    }));
  }

  /** The node keys the player unlocked; not-found for a player not of the environment. */
  private async unlockedBy(db: Queryable, env: EnvironmentContext, playerId: string): Promise<Set<string>> {
    const player = await db('players').where({ id: playerId, environment_id: env.id }).first('id');
    if (!player) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
    const rows: { node_key: string }[] = await db('player_skill_nodes').where({ player_id: playerId }).select('node_key');
    return new Set(rows.map((r) => r.node_key));
  }

  /**
   * GET /players/:playerId/skill-trees: the player's trees by key, each node with `unlocked` and
   * `unlockable`. Switched-off trees are left out; `withHidden` false (a player's token) leaves hidden
   * trees out too.
   */
  async listForPlayer(db: Queryable, env: EnvironmentContext, playerId: string, withHidden: boolean, q: PageRequest): Promise<Page<SkillTree>> {
    const unlocked = await this.unlockedBy(db, env, playerId);
    const { definitions } = await this.trees.snapshot(env.id);
    const visible = definitions.filter((t) => playerSees(t, withHidden));
    return this.trees.page(visible, `player-skill-trees|${env.id}|${playerId}|${withHidden}`, q, (t) => playerTree(t, unlocked));
  }

  /** GET /players/:playerId/skill-trees/:treeKey: one tree; a switched-off one is not-found, and a hidden one to a player's token. */
  async getForPlayer(db: Queryable, env: EnvironmentContext, playerId: string, treeKey: string, withHidden: boolean): Promise<SkillTree> {
    const unlocked = await this.unlockedBy(db, env, playerId);
    const { definitions } = await this.trees.snapshot(env.id);
    const tree = definitions.find((t) => t.key === treeKey && playerSees(t, withHidden));
    if (!tree) throw refuse.notFound('The skill tree', { key: treeKey, field: 'treeKey' });
    return playerTree(tree, unlocked);
  }

  /**
   * POST /players/:playerId/skill-nodes/:nodeKey/unlock: one move of the money engine
   * (hearth_skill_node_unlock): the parents and required unlocks checked (`locked`, details.missing),
   * the prices charged and the node recorded in one statement; a node the player holds answers
   * `alreadyUnlocked` and charges nothing; a node of a switched-off tree is `disabled`. `by` is who
   * sent it: a player's token may not send allowances, nor unlock at all in a game of the service's
   * own whose skill trees the game itself unlocks (`forbidden`, UNLOCK_SENDERS). With `record`, at
   * most once per Idempotency-Key. Refusals change nothing.
   */
  async unlock(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    nodeKey: string,
    request: SkillNodeUnlockRequest,
    by: Sender,
    record?: IdempotencyScope,
  ): Promise<EngineAnswer<SkillNodeUnlock>> {
    checkSender(UNLOCK_SENDERS, by, env, request);
    return runEngineMove<SkillNodeUnlock>(
      db,
      env,
      playerId,
      'skill-node-unlock',
      { nodeKey, realmId: request.realmId, payWith: request.payWith, allowances: request.allowances },
      record,
    );
  }
}

/** Whether a player's lists show the tree: never a switched-off one; a hidden one only to a server key. */
function playerSees(tree: StoredTree, withHidden: boolean): boolean {
  return tree.enabled && (withHidden || !tree.hidden);
}

function playerTree(tree: StoredTree, unlocked: Set<string>): SkillTree {
  return {
    key: tree.key,
    name: tree.name,
    description: tree.description,
    hidden: tree.hidden,
    nodes: tree.nodes.map((n): SkillNode => {
      const has = unlocked.has(n.key);
      return { ...nodeDefinition(n), unlocked: has, unlockable: !has && n.parents.every((p) => unlocked.has(p)) };
    }),
  };
}
