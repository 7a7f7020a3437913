/**
 * Paging shared by every paginated list: `limit` default
 * 50, ceiling 200; opaque cursors that carry the last id, bound to the list
 * they came from and signed with a key derived from the JWT secret, so they
 * survive restarts and a forged or foreign cursor answers 400.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidRequest } from './errors.js';
import { parseId } from './ids.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export interface PageRequest {
  limit: number;
  beforeId: number | undefined;
}

export interface CursorCodec {
  encode(list: string, lastId: number): string;
  /** The id carried by the cursor, or a 400 when the service did not issue it for this list. */
  decode(list: string, cursor: string): number;
}

export function createCursorCodec(secret: string): CursorCodec {
  const key = createHmac('sha256', 'logkeep-cursor-v1').update(secret).digest();
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest().subarray(0, 16);
  return {
    encode(list, lastId) {
      const payload = `${list}:${lastId}`;
      return `${Buffer.from(String(lastId)).toString('base64url')}.${sign(payload).toString('base64url')}`;
    },
    decode(list, cursor) {
      const bad = () => invalidRequest('The cursor is not one this service issued.', 'cursor', 'invalid');
      const dot = cursor.indexOf('.');
      if (dot <= 0 || cursor.length > 200) throw bad();
      const idText = Buffer.from(cursor.slice(0, dot), 'base64url').toString('utf8');
      if (parseId(idText) === null) throw bad();
      const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
      const expected = sign(`${list}:${idText}`);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad();
      return Number(idText);
    },
  };
}

/** Reads `limit` and `cursor` from the query string. */
export function readPageRequest(query: URLSearchParams, list: string, cursors: CursorCodec): PageRequest {
  let limit = DEFAULT_LIMIT;
  const rawLimit = query.get('limit');
  if (rawLimit !== null) {
    if (!/^[0-9]+$/.test(rawLimit) || Number(rawLimit) < 1) {
      throw invalidRequest('limit must be a positive integer.', 'limit', 'invalid');
    }
    limit = Math.min(Number(rawLimit), MAX_LIMIT);
  }
  const rawCursor = query.get('cursor');
  const beforeId = rawCursor === null ? undefined : cursors.decode(list, rawCursor);
  return { limit, beforeId };
}

/**
 * What a list reads for a page: one row more than the limit (so `toPage`
 * knows whether another page follows), below the cursor's id when given.
 */
export function rowsToFetch(page: PageRequest): { limit: number; beforeId?: number } {
  return { limit: page.limit + 1, ...(page.beforeId === undefined ? {} : { beforeId: page.beforeId }) };
}

/**
 * Turns `limit + 1` fetched rows (newest first) into a page: the first
 * `limit` items and a cursor when more rows exist.
 */
export function toPage<R extends { id: number }, T>(
  rows: R[],
  page: PageRequest,
  list: string,
  cursors: CursorCodec,
  present: (row: R) => T,
): { items: T[]; next_cursor: string | null } {
  const more = rows.length > page.limit;
  const kept = more ? rows.slice(0, page.limit) : rows;
  const last = kept[kept.length - 1];
  return {
    items: kept.map(present),
    next_cursor: more && last ? cursors.encode(list, last.id) : null,
  };
}
