/**
 * `logkeep query`: entries matching the filters, newest first, a page at
 * a time from `GET /v1/logs` until `--limit` entries were shown or none
 * are left. A table on a terminal; `--json` (one object: items and the
 * cursor to continue) or `--ndjson` (an entry per line) for pipes. The
 * cursor to continue is printed on standard error when more remain.
 */
import { ApiSession } from './api.js';
import { FILTER_HELP, FILTER_OPTIONS, filterQuery, parseCommand, positiveInt } from './filters.js';
import { entriesTable, type LogEntry } from './output.js';
import { loadCredentials } from './profile.js';

/** The API serves at most this many entries a page. */
export const API_PAGE_MAX = 200;

export const QUERY_HELP = `Usage: logkeep query (--project <id> | --group <id>) [filters] [options]

Entries matching the filters, newest first.

${FILTER_HELP}
Output:
      --limit <n>               Entries to show in all (default 50), fetched a page of up to 200 at a time
      --cursor <cursor>         Continue where an earlier query stopped (it prints the cursor on stderr)
      --json                    One JSON object: {items, next_cursor}
      --ndjson                  One entry per line, as JSON
      --profile <name>          The stored profile to use (default: LOGKEEP_PROFILE, else "default")`;

export async function runQuery(argv: readonly string[]): Promise<void> {
  const { values } = parseCommand(argv, {
    ...FILTER_OPTIONS,
    limit: { type: 'string' },
    cursor: { type: 'string' },
    json: { type: 'boolean' },
    ndjson: { type: 'boolean' },
  });
  if (values.help) return void process.stdout.write(`${QUERY_HELP}\n`);
  const query = filterQuery(values);
  const limit = positiveInt(values.limit, '--limit', 50);
  const session = new ApiSession(await loadCredentials(values.profile as string | undefined));
  // Kept for the table and --json; --ndjson writes each page as it comes.
  const items: LogEntry[] = [];
  let shown = 0;
  let cursor = (values.cursor as string | undefined) ?? null;
  do {
    const page = new URLSearchParams(query);
    page.set('limit', String(Math.min(API_PAGE_MAX, limit - shown)));
    if (cursor !== null) page.set('cursor', cursor);
    const body = (await session.getJson('/v1/logs', page, 'query')) as { items: LogEntry[]; next_cursor: string | null };
    if (values.ndjson) process.stdout.write(body.items.map((e) => `${JSON.stringify(e)}\n`).join(''));
    else items.push(...body.items);
    shown += body.items.length;
    cursor = body.next_cursor;
  } while (shown < limit && cursor !== null);
  if (values.json) process.stdout.write(`${JSON.stringify({ items, next_cursor: cursor })}\n`);
  else if (!values.ndjson) {
    if (items.length > 0) process.stdout.write(`${entriesTable(items, process.stdout)}\n`);
    else process.stderr.write('no entries match\n');
  }
  if (cursor !== null && !values.json) process.stderr.write(`more entries: continue with --cursor ${cursor}\n`);
}
