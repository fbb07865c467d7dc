import { createHmac, timingSafeEqual } from 'node:crypto';
import { refuse } from './errors';
import type { Knex } from 'knex';
import type { Queryable } from './db/knex';
import type { PageRequest } from './shapes/common';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export interface Page<T> {
  items: T[];
  next: string | null;
}

/**
 * Opaque keyset cursors: the position (the last item's sort key) and the list it belongs to, signed
 * with a MAC so a cursor cannot be forged, edited, or carried to another list (or another
 * environment, or the same list with other filters).
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  encode(listId: string, position: unknown): string {
    const body = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${body}.${this.mac(listId, body)}`;
  }

  /** The position a cursor carries, or `invalid-request` naming `cursor`. */
  decode<T>(listId: string, cursor: string): T {
    const dot = cursor.indexOf('.');
    const body = cursor.slice(0, dot);
    // The signature's text is compared, not its decoded bytes: base64 decoding skips padding, spaces
    // and stray characters, so `<cursor>=` decoded to the same bytes and was taken as the cursor
    // itself (test/security/cursor-tampering.test.ts). A cursor is exactly the text the list made.
    const given = Buffer.from(cursor.slice(dot + 1), 'utf8');
    const expected = Buffer.from(this.mac(listId, body), 'utf8');
    if (dot <= 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw refuse.invalid('cursor', 'The cursor was not made by this list.');
    }
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
    } catch {
      throw refuse.invalid('cursor', 'The cursor was not made by this list.');
    }
  }

  private mac(listId: string, body: string): string {
    return createHmac('sha256', this.key).update(listId).update('\u0000').update(body).digest('base64url').slice(0, 32);
  }
}

/**
 * Runs a keyset query asking for one row more than the page, so `next` is null exactly on the last page.
 * `fetch` gets the decoded position (or undefined for the first page) and how many rows to read.
 */
export async function keysetPage<Row, Item, Pos>(
  codec: CursorCodec,
  listId: string,
  query: PageRequest,
  fetch: (after: Pos | undefined, take: number) => Promise<Row[]>,
  positionOf: (row: Row) => Pos,
  toItem: (row: Row) => Item,
): Promise<Page<Item>> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const after = query.cursor === undefined ? undefined : codec.decode<Pos>(listId, query.cursor);
  const rows = await fetch(after, limit + 1);
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  return {
    items: pageRows.map(toItem),
    next: more ? codec.encode(listId, positionOf(pageRows[pageRows.length - 1])) : null,
  };
}

/**
 * A keyset page of one environment's rows of `table` in the order of `by`, a column unique in the
 * environment (`key`, `name`, `number`), each answered by `toItem`. `listId` names the list in its
 * cursors (the environment and any filter in it); `narrow` adds the list's own filter.
 */
export function environmentRowsPage<Item, Row = Record<string, unknown>>(
  codec: CursorCodec,
  db: Queryable,
  environmentId: number,
  q: PageRequest,
  rows: { listId: string; table: string; by: string; narrow?: (query: Knex.QueryBuilder) => void },
  toItem: (row: Row) => Item,
): Promise<Page<Item>> {
  return keysetPage<Row, Item, string | number>(
    codec,
    rows.listId,
    q,
    (after: string | number | undefined, take) => {
      const query = db(rows.table).where({ environment_id: environmentId }).orderBy(rows.by).limit(take);
      rows.narrow?.(query);
      if (after !== undefined) query.where(rows.by, '>', after);
      return query;
    },
    (row) => (row as Record<string, unknown>)[rows.by] as string | number,
    toItem,
  );
}
