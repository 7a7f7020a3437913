/**
 * A list of fixed-height rows that renders only the rows in view (plus a
 * few either side), so 10,000 loaded entries cost what 40 do. Calls
 * `onNearEnd` when the view comes within a screen of the last row.
 */
import type { ComponentChildren, Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export const ROW_HEIGHT = 30;
const OVERSCAN = 8;

export function VirtualList<T>(props: {
  items: T[];
  render: (item: T, index: number) => ComponentChildren;
  onNearEnd?: () => void;
  onScrollTop?: (top: number) => void;
  label: string;
  listRef?: Ref<HTMLDivElement>;
}) {
  const own = useRef<HTMLDivElement>(null);
  const box = (props.listRef as { current: HTMLDivElement | null } | undefined) ?? own;
  const [view, setView] = useState({ top: 0, height: 600 });
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const update = () => setView({ top: el.scrollTop, height: el.clientHeight });
    update();
    const observer = new ResizeObserver(update);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  const first = Math.max(0, Math.floor(view.top / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(props.items.length, Math.ceil((view.top + view.height) / ROW_HEIGHT) + OVERSCAN);
  useEffect(() => {
    if (props.onNearEnd && last >= props.items.length - Math.ceil(view.height / ROW_HEIGHT)) props.onNearEnd();
  }, [last, props.items.length]);
  const rows: ComponentChildren[] = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <div role="listitem" class="vrow" key={i} style={{ top: `${i * ROW_HEIGHT}px`, height: `${ROW_HEIGHT}px` }}>
        {props.render(props.items[i]!, i)}
      </div>,
    );
  }
  return (
    <div
      class="vlist"
      ref={box}
      tabIndex={0}
      role="region"
      aria-label={props.label}
      onScroll={(e) => {
        const el = e.currentTarget as HTMLDivElement;
        setView({ top: el.scrollTop, height: el.clientHeight });
        props.onScrollTop?.(el.scrollTop);
      }}
    >
      <div role="list" class="vlist-inner" style={{ height: `${props.items.length * ROW_HEIGHT}px` }}>
        {rows}
      </div>
    </div>
  );
}
