/**
 * Following a query live (`followLive`) while `enabled`: the stream opens
 * from the entry `since()` names and closes when the query changes, the
 * page pauses, or it unmounts. Returns the stream's state for the status line.
 */
import { useEffect, useState } from 'preact/hooks';
import { followLive, type LiveState } from '../live';

export interface LiveStatus {
  state: LiveState;
  detail?: string | undefined;
}

/**
 * `query`: the service's query; `key` its identity (the stream restarts when
 * it changes). `onEntries` receives each delivery, oldest first.
 */
export function useLiveFollow(
  query: URLSearchParams,
  key: string,
  enabled: boolean,
  since: () => number,
  onEntries: (entries: Record<string, unknown>[]) => void,
): LiveStatus | null {
  const [status, setStatus] = useState<LiveStatus | null>(null);
  useEffect(() => {
    if (!enabled) return;
    const stream = followLive(query, since(), {
      onEntries,
      onState: (state, detail) => setStatus({ state, detail }),
    });
    return () => stream.close();
  }, [enabled, key]);
  return status;
}
