/**
 * `logkeep mcp`: a Model Context Protocol server over standard input and
 * output (the official SDK), for agents, authenticated like every client
 * command (a stored profile, or LOGKEEP_URL and LOGKEEP_KEY; an access key
 * with `read` is the intended credential). Its tools list the projects the
 * key covers, search entries with every filter of `GET /v1/logs` (the
 * correlation fields included), show the entries around one, and count by
 * time. Every answer is bounded in size and says how to get the next page.
 * Standard output carries only the protocol; diagnostics go to standard
 * error.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { ApiSession } from './api.js';
import { CliError } from './errors.js';
import { parseCommand } from './filters.js';
import { loadCredentials } from './profile.js';

/** Characters of JSON one tool answer may hold: about 15k tokens, what an agent can read without drowning its context. */
export const MCP_RESULT_MAX_CHARS = 60_000;
/** Entries one search answers at most (the agent pages for more). */
export const MCP_SEARCH_MAX = 100;
/** Entries on each side of `entries_around`. */
export const MCP_AROUND_MAX = 50;
/** Entries read at most to find the nearest ones after a time (pages of 200 through the window). */
const AROUND_SCAN_MAX = 2_000;

export const MCP_HELP = `Usage: logkeep mcp [--profile <name>]

A Model Context Protocol server on standard input and output, for agents.
It uses the stored profile (or LOGKEEP_URL and LOGKEEP_KEY): an access key
with 'read' is the intended credential. Tools: list_projects, search_logs,
entries_around, count_by_time. See docs/mcp.md for a client configuration.`;

const CORRELATION_FIELDS = ['category', 'logger', 'session_id', 'request_id', 'connection_generation', 'tool_call_id', 'message_id', 'operation_id'] as const;

const scopeShape = {
  project_id: z.number().int().positive().optional().describe('One project (give this or group_id)'),
  group_id: z.number().int().positive().optional().describe("A group: every project in it, for correlating across a group's projects"),
};

const filterShape = {
  ...scopeShape,
  q: z.string().max(1000).optional().describe('Words every entry must contain; a word ending in * is a prefix (pay*)'),
  level: z.enum(['debug', 'info', 'warning', 'error', 'critical']).optional().describe('This level and above'),
  from: z.string().optional().describe('ISO 8601: entries with a timestamp at or after'),
  to: z.string().optional().describe('ISO 8601: entries with a timestamp at or before'),
  ...Object.fromEntries(CORRELATION_FIELDS.map((f) => [f, z.string().max(1000).optional().describe(`Exact value of ${f}`)])),
  context: z.record(z.string(), z.string()).optional().describe('Exact values inside the entry by dotted path, e.g. {"http.status": "500"}'),
};

type Args = Record<string, unknown>;

export async function runMcp(argv: readonly string[]): Promise<void> {
  const { values } = parseCommand(argv, {});
  if (values.help) return void process.stdout.write(`${MCP_HELP}\n`);
  const session = new ApiSession(await loadCredentials(values.profile as string | undefined));
  const server = new McpServer({ name: 'logkeep', version: '1' });

  server.registerTool(
    'list_projects',
    {
      description: 'The projects this key may read: id, name and group_id. Use the ids as project_id, and group_id to search across a group.',
      inputSchema: { name: z.string().max(200).optional().describe('Only projects whose name contains this'), cursor: z.string().optional() },
    },
    (args) =>
      answer(async () => {
        const query = new URLSearchParams({ limit: '200' });
        if (args.name) query.set('name', args.name);
        if (args.cursor) query.set('cursor', args.cursor);
        const page = (await session.getJson('/v1/projects', query, 'list_projects')) as { items: Array<Record<string, unknown>>; next_cursor: string | null };
        return { projects: page.items.map((p) => ({ id: p.id, name: p.name, group_id: p.group_id })), next_cursor: page.next_cursor };
      }),
  );

  server.registerTool(
    'search_logs',
    {
      description:
        'Log entries matching the filters, newest first. Correlate by giving a correlation field (request_id, session_id, tool_call_id, …) with a group_id to follow it across projects. ' +
        `Answers at most ${MCP_SEARCH_MAX} entries and about ${MCP_RESULT_MAX_CHARS} characters; pass next_cursor back as cursor for the next page.`,
      inputSchema: {
        ...filterShape,
        limit: z.number().int().min(1).max(MCP_SEARCH_MAX).optional().describe('Entries per answer (default 20)'),
        cursor: z.string().optional().describe('next_cursor of the previous answer, with the same filters'),
      },
    },
    (args) => answer(() => searchBounded(session, args as Args, (args.limit as number | undefined) ?? 20, args.cursor as string | undefined)),
  );

  server.registerTool(
    'entries_around',
    {
      description:
        'The entries of a project just before and just after a moment (an entry of a search answer: its project_id and timestamp), in time order, to see what led to it and what followed. ' +
        'Entries with the same timestamp count as after.',
      inputSchema: {
        project_id: z.number().int().positive(),
        timestamp: z.string().describe("The entry's timestamp (ISO 8601)"),
        before: z.number().int().min(0).max(MCP_AROUND_MAX).optional().describe('Entries before (default 10)'),
        after: z.number().int().min(0).max(MCP_AROUND_MAX).optional().describe('Entries at or after (default 10)'),
        window_seconds: z.number().int().min(1).max(86_400).optional().describe('How far after the moment to look (default 3600)'),
      },
    },
    (args) => answer(() => entriesAround(session, args.project_id, args.timestamp, args.before ?? 10, args.after ?? 10, args.window_seconds ?? 3600)),
  );

  server.registerTool(
    'count_by_time',
    {
      description:
        'How many entries match, per time bucket and level (the volume over time), to find when something started or peaked. Default range: the last 24 hours.',
      inputSchema: { ...filterShape, buckets: z.number().int().min(1).max(500).optional().describe('Buckets over the range (default 60)') },
    },
    (args) =>
      answer(async () => {
        const query = filterQueryOf(args as Args);
        query.set('buckets', String((args.buckets as number | undefined) ?? 60));
        return session.getJson('/v1/logs/histogram', query, 'count_by_time');
      }),
  );

  const transport = new StdioServerTransport();
  await server.connect(transport);
  // Runs until the client closes standard input.
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.close();
}

/** A tool answer as JSON text; a refusal becomes an error answer in words (the agent reads it), not a protocol error. */
async function answer(work: () => Promise<unknown>): Promise<{ content: { type: 'text'; text: string }[]; isError?: boolean }> {
  try {
    return { content: [{ type: 'text', text: JSON.stringify(await work()) }] };
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    return { content: [{ type: 'text', text: err.message }], isError: true };
  }
}

function filterQueryOf(args: Args): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of ['project_id', 'group_id', 'q', 'level', 'from', 'to', ...CORRELATION_FIELDS]) {
    const value = args[name];
    if (value !== undefined) query.set(name, String(value));
  }
  for (const [path, value] of Object.entries((args.context as Record<string, string> | undefined) ?? {})) query.set(`context.${path}`, value);
  return query;
}

/**
 * One page of at most `limit` entries whose JSON fits the answer's bound:
 * a page too large is asked again with half the entries (the service's
 * cursor then continues right after the last one answered).
 */
async function searchBounded(session: ApiSession, args: Args, limit: number, cursor: string | undefined): Promise<unknown> {
  let size = limit;
  for (;;) {
    const query = filterQueryOf(args);
    query.set('limit', String(size));
    if (cursor) query.set('cursor', cursor);
    const page = (await session.getJson('/v1/logs', query, 'search_logs')) as { items: unknown[]; next_cursor: string | null };
    const text = JSON.stringify(page.items);
    if (text.length <= MCP_RESULT_MAX_CHARS || size === 1) {
      if (text.length > MCP_RESULT_MAX_CHARS) {
        return {
          entries: [],
          truncated_entry: text.slice(0, MCP_RESULT_MAX_CHARS),
          next_cursor: page.next_cursor,
          note: 'One entry is larger than an answer may be; it is cut.',
        };
      }
      return { entries: page.items, next_cursor: page.next_cursor };
    }
    size = Math.max(1, Math.floor(size / 2));
  }
}

/** The nearest entries before a moment (newest first, then reversed) and at or after it (read through the window). */
async function entriesAround(
  session: ApiSession,
  projectId: number,
  timestamp: string,
  before: number,
  after: number,
  windowSeconds: number,
): Promise<unknown> {
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) throw new CliError(`timestamp must be an ISO 8601 date-time (got '${timestamp}')`, 7);
  const beforeQuery = new URLSearchParams({ project_id: String(projectId), to: new Date(at - 1).toISOString(), limit: String(Math.max(1, before)) });
  const earlier = before === 0 ? [] : ((await session.getJson('/v1/logs', beforeQuery, 'entries_around')) as { items: unknown[] }).items;

  // Newest first within [at, at + window]: the nearest after are the last ones; keep only those.
  const later: unknown[] = [];
  let cursor: string | null = null;
  let read = 0;
  let complete = true;
  if (after > 0) {
    do {
      const query = new URLSearchParams({
        project_id: String(projectId),
        from: new Date(at).toISOString(),
        to: new Date(at + windowSeconds * 1000).toISOString(),
        limit: '200',
      });
      if (cursor) query.set('cursor', cursor);
      const page = (await session.getJson('/v1/logs', query, 'entries_around')) as { items: unknown[]; next_cursor: string | null };
      later.push(...page.items);
      if (later.length > after) later.splice(0, later.length - after);
      read += page.items.length;
      cursor = page.next_cursor;
    } while (cursor !== null && read < AROUND_SCAN_MAX);
    complete = cursor === null;
  }
  const result = {
    before: [...earlier].reverse(),
    after: [...later].reverse(),
    ...(complete ? {} : { note: `More than ${AROUND_SCAN_MAX} entries in the window: narrow window_seconds to see the nearest ones after.` }),
  };
  const text = JSON.stringify(result);
  return text.length <= MCP_RESULT_MAX_CHARS
    ? result
    : { ...result, after: [], before: [], note: 'The entries are too large for one answer; ask for fewer with before and after.' };
}
