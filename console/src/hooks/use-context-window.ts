/**
 * The entries just before and after one entry of a project, in time order,
 * and the entry itself: the first step each way as soon as the link
 * changes (the answer for an older link is dropped), further steps on
 * demand, one at a time. See context-walk.ts for how a step is read.
 */
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import type { Page } from '../api-types';
import type { Entry } from '../components/entry-detail';
import { walk, positionOf, type Direction, type Position, type ReadWindow } from '../context-walk';

/** Entries each step shows on one side: a screenful. */
export const CONTEXT_STEP = 20;

function windowReader(projectId: string): ReadWindow<Entry> {
  return (from, to, cursor, limit) => {
    const q = new URLSearchParams({ project_id: projectId, limit: String(limit) });
    if (from !== null) q.set('from', new Date(from).toISOString());
    if (to !== null) q.set('to', new Date(to).toISOString());
    if (cursor) q.set('cursor', cursor);
    return call<Page<Entry>>(`/v1/logs?${q}`);
  };
}

/** The entry itself, among those of its millisecond (null when it is no longer stored). */
async function findOrigin(read: ReadWindow<Entry>, at: Position): Promise<Entry | null> {
  let cursor: string | null = null;
  do {
    const page: Page<Entry> = await read(at.ms, at.ms, cursor, 200);
    const found = page.items.find((e) => e.id === at.id);
    if (found) return found;
    if (page.items.some((e) => e.id < at.id)) return null;
    cursor = page.next_cursor;
  } while (cursor);
  return null;
}

export interface Side {
  /** Nearest first. */
  entries: Entry[];
  /** Nothing more that way (as of the last look). */
  done: boolean;
}

const EMPTY: Side = { entries: [], done: false };

export interface ContextWindow {
  /** The entry itself, once found. */
  origin: Entry | null;
  /** Nearest first. */
  before: Side;
  after: Side;
  error: string | null;
  /** The entry is no longer stored; its neighbours are shown around its time. */
  missing: boolean;
  /** A step is on its way. */
  busy: boolean;
  /** The link says when the entry was written (else nothing can be read). */
  placed: boolean;
  earlier(): Promise<void>;
  later(): Promise<void>;
}

/** `ms`: the entry's time from the link (null when it has none); `key`: the link's identity. */
export function useContextWindow(projectId: string, id: number, ms: number | null, key: string): ContextWindow {
  const [origin, setOrigin] = useState<Entry | null>(null);
  const [before, setBefore] = useState<Side>(EMPTY);
  const [after, setAfter] = useState<Side>(EMPTY);
  const [error, setError] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const [busy, setBusy] = useState(false);

  const read = windowReader(projectId);
  const at: Position | null = ms === null ? null : { ms, id };
  const extend = async (direction: Direction, side: Side, set: (s: Side) => void) => {
    const last = side.entries[side.entries.length - 1];
    const more = await walk(read, last ? positionOf(last) : at!, direction, CONTEXT_STEP);
    set({ entries: [...side.entries, ...more.entries], done: more.exhausted });
  };

  useEffect(() => {
    setOrigin(null);
    setBefore(EMPTY);
    setAfter(EMPTY);
    setError(null);
    setMissing(false);
    if (!at) {
      setError('This link does not say when the entry was written.');
      return;
    }
    let current = true;
    const guard =
      <T>(set: (v: T) => void) =>
      (v: T) =>
        current && set(v);
    Promise.all([
      findOrigin(read, at).then((e) => current && (e ? setOrigin(e) : setMissing(true))),
      extend('before', EMPTY, guard(setBefore)),
      extend('after', EMPTY, guard(setAfter)),
    ]).catch((err: Error) => current && setError(err.message));
    return () => {
      current = false;
    };
  }, [key]);

  const wrap = (f: () => Promise<void>) => async () => {
    setBusy(true);
    try {
      await f();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return {
    origin,
    before,
    after,
    error,
    missing,
    busy,
    placed: at !== null,
    earlier: wrap(() => extend('before', before, setBefore)),
    later: wrap(() => extend('after', after, setAfter)),
  };
}
