/** The explore query as the URL holds it, and its translation to `GET /v1/logs` parameters. */
export const LEVELS = ['debug', 'info', 'warning', 'error', 'critical'] as const;
export type Level = (typeof LEVELS)[number];
export const CORRELATION_FIELDS = ['request_id', 'session_id', 'operation_id', 'message_id', 'tool_call_id', 'connection_generation'] as const;
/** Exact-match filters of `GET /v1/logs` besides the correlation fields. */
export const EXACT_FIELDS = ['category', 'logger', ...CORRELATION_FIELDS] as const;

/** Relative time ranges, kept relative in the URL so a shared link means "the last hour" when opened. */
export const RANGE_PRESETS: Record<string, { label: string; seconds: number }> = {
  '15m': { label: 'Last 15 minutes', seconds: 900 },
  '1h': { label: 'Last hour', seconds: 3600 },
  '6h': { label: 'Last 6 hours', seconds: 21600 },
  '24h': { label: 'Last 24 hours', seconds: 86400 },
  '7d': { label: 'Last 7 days', seconds: 604800 },
  '30d': { label: 'Last 30 days', seconds: 2592000 },
};

/**
 * The URL parameters that are filters of `GET /v1/logs` (with `context.<path>`),
 * the only ones sent to the service. Anything else a link carries (`limit`,
 * `cursor`, `buckets`, `since_id`, or a name the console does not know) stays in
 * the address bar: a link must not choose what the console asks beyond its filters.
 */
const SERVICE_FILTERS = new Set<string>(['project_id', 'group_id', 'level', 'from', 'to', 'q', ...EXACT_FIELDS]);

/** Whether a URL parameter is one the console forwards to the service. */
export function isServiceFilter(name: string): boolean {
  return SERVICE_FILTERS.has(name) || (name.startsWith('context.') && name.length > 'context.'.length);
}

/** The service's parameters for a URL query (a relative range becomes `from`); only known filters pass. */
export function serviceParams(params: URLSearchParams, now = Date.now()): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of params) if (isServiceFilter(k) && v !== '') out.append(k, v);
  const preset = RANGE_PRESETS[params.get('range') ?? ''];
  if (preset && !params.get('from')) out.set('from', new Date(now - preset.seconds * 1000).toISOString());
  return out;
}

/** What makes two URLs the same query: the filters and the relative range (not the open entry, the live toggle or unknown names). */
export function queryIdentity(params: URLSearchParams): string {
  const out = new URLSearchParams();
  for (const [k, v] of params) if (isServiceFilter(k) || k === 'range') out.append(k, v);
  return out.toString();
}

export function hasScope(params: URLSearchParams): boolean {
  return Boolean(params.get('project_id') || params.get('group_id'));
}

/** The query parameter that filters on the value at `path` of an entry (top-level known fields, else `context.<path>`). */
export function filterParamFor(path: string[]): string | null {
  if (path.length === 0) return null;
  const [first] = path;
  if (path.length === 1 && (EXACT_FIELDS as readonly string[]).includes(first!)) return first!;
  if (path.length === 1 && first === 'level') return 'level';
  if (path.length === 1 && ['id', 'project_id', 'received_at', 'timestamp', 'event'].includes(first!)) return null;
  return `context.${path.join('.')}`;
}
