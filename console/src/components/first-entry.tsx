/**
 * The first-run guide's last step: follows the new project live (from its
 * very first entry, so nothing sent before the stream opened is missed)
 * until an entry arrives, then shows it and leads to Explore. The key is
 * never kept here: the person sends the entry with the curl example.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { followLive, type LiveState } from '../live';
import { localTime, utcTitle } from '../format';
import { href } from '../router';
import type { Entry } from './entry-detail';
import { Card } from './form';
import { JsonTree } from './json-tree';

export function FirstEntry(props: { projectId: number; keyMade: boolean; onArrived: () => void }) {
  const [entry, setEntry] = useState<Entry | null>(null);
  const shown = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<{ state: LiveState; detail?: string | undefined }>({ state: 'connecting' });
  useEffect(() => {
    if (entry) return;
    const stream = followLive(new URLSearchParams({ project_id: String(props.projectId) }), 0, {
      onEntries: (entries) => {
        setEntry(entries[0] as Entry);
        props.onArrived();
      },
      onState: (s, detail) => setState({ state: s, detail }),
    });
    return () => stream.close();
  }, [props.projectId, entry === null]);
  // Below the key's examples: bring it into view when it arrives.
  useEffect(() => shown.current?.scrollIntoView({ block: 'start' }), [entry !== null]);
  const explore = href('explore', { project_id: String(props.projectId) });
  return (
    <Card title="Send your first entry">
      {entry ? (
        <div class="first-entry" ref={shown} role="region" aria-label="Your first entry">
          <p role="status">
            <strong>Your first entry has arrived.</strong>
          </p>
          <p>
            <span class={`lvl lvl-${entry.level}`}>{entry.level}</span>{' '}
            <time class="ts" title={utcTitle(entry.timestamp)}>
              {localTime(entry.timestamp)}
            </time>{' '}
            <span class="event">{String(entry.event)}</span>
          </p>
          <JsonTree value={entry} />
          <p>
            <a class="button primary" href={explore}>
              Explore this project's logs
            </a>
          </p>
        </div>
      ) : (
        <>
          <p>
            {props.keyMade
              ? 'Paste the curl example shown with the new key into a terminal (or send from your application with IngestClient).'
              : 'Create a key above; its curl example sends an entry from a terminal.'}
          </p>
          <p role="status" class={`live-state live-${state.state}`}>
            {state.state === 'ended'
              ? `Not following: ${state.detail ?? 'the stream ended'}`
              : state.state === 'reconnecting'
                ? 'Connection lost, reconnecting…'
                : 'Waiting for the first entry (following this project live)…'}
          </p>
          <p>
            <a href={explore}>Or go to Explore now</a>
          </p>
        </>
      )}
    </Card>
  );
}
