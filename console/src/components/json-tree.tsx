/**
 * An entry as a collapsible tree. Every key and value is rendered as text
 * (entries are untrusted input). Each leaf has a copy button and, where the
 * service can filter on it, "filter on this value".
 */
import { useState } from 'preact/hooks';
import { asText, copyText } from '../format';
import { filterParamFor } from '../query';

export type OnFilter = (param: string, value: string) => void;

function Leaf(props: { name: string; path: string[]; value: unknown; onFilter?: OnFilter | undefined }) {
  const [copied, setCopied] = useState(false);
  const param = filterParamFor(props.path);
  const v = props.value;
  const filterable = param !== null && v !== null && typeof v !== 'object' && props.onFilter;
  const kind = v === null ? 'null' : typeof v;
  return (
    <li class="leaf">
      <span class="key">{props.name}</span>
      <span class={`val val-${kind}`}>{typeof v === 'string' ? JSON.stringify(v) : String(v)}</span>
      <span class="leaf-actions">
        <button type="button" class="small" aria-label={`Copy ${props.path.join('.')}`} onClick={async () => setCopied(await copyText(asText(v)))}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        {filterable ? (
          <button type="button" class="small" aria-label={`Filter on ${props.path.join('.')}`} onClick={() => props.onFilter!(param!, asText(v))}>
            Filter
          </button>
        ) : null}
      </span>
    </li>
  );
}

export function JsonTree(props: { value: unknown; path?: string[]; name?: string; onFilter?: OnFilter | undefined; depth?: number }) {
  const path = props.path ?? [];
  const depth = props.depth ?? 0;
  const v = props.value;
  if (v === null || typeof v !== 'object') {
    return <Leaf name={props.name ?? ''} path={path} value={v} onFilter={props.onFilter} />;
  }
  const isArray = Array.isArray(v);
  const entries = isArray ? (v as unknown[]).map((x, i) => [String(i), x] as const) : Object.entries(v as Record<string, unknown>);
  const children = (
    <ul class="tree">
      {entries.map(([k, child]) => (
        // Arrays are not addressable by context filters: their leaves get copy only.
        <JsonTree key={k} name={k} value={child} path={[...path, k]} onFilter={isArray ? undefined : props.onFilter} depth={depth + 1} />
      ))}
    </ul>
  );
  if (depth === 0) return children;
  return (
    <li>
      <details open={depth < 3}>
        <summary>
          <span class="key">{props.name}</span> <span class="muted">{isArray ? `[${entries.length}]` : `{${entries.length}}`}</span>
        </summary>
        {children}
      </details>
    </li>
  );
}
