/**
 * PostgreSQL ingestion ceilings for the benchmarks: the same rows the
 * service stores, written by the cheapest means PostgreSQL offers into a
 * table with no index at all, in the same run as the service's figure.
 *
 * - `COPY … FROM STDIN` (text format), spoken directly on a `pg` client:
 *   `pg-copy-streams` is not a dependency, and a COPY needs nothing more
 *   than a query object that answers the server's CopyInResponse with the
 *   data (CopyData) and CopyDone. One COPY per 500-row batch, one batch per
 *   transaction, from `writers` connections at once.
 * - A multi-row `INSERT … SELECT FROM unnest($1::bigint[], …, $6::text[])`,
 *   the bulk path open to a driver without COPY.
 */
import pgPromise from 'pg-promise';
import type { BatchPool } from './dataset.js';
import type { BenchDatabase } from './harness.js';
import { pgBackendsCpu } from './cpu-time.js';

/** The columns of a stored entry: project, received_at, ts, level, bytes, body. */
export type RawRow = [number, number, number, number, number, string];

const LEVELS: Record<string, number> = { debug: 0, info: 1, warning: 2, error: 3, critical: 4 };

/** The rows of pool batch `i`, as the service would store them for project `projectId`. */
export function rawRows(pool: BatchPool, i: number, projectId: number): RawRow[] {
  const entries = JSON.parse(pool.bodies[i]!.toString('utf8')) as Record<string, unknown>[];
  const now = Date.now();
  return entries.map((e) => {
    const body = JSON.stringify(e);
    return [projectId, now, Date.parse(e.timestamp as string), LEVELS[e.level as string] ?? 1, Buffer.byteLength(body), body];
  });
}

/** COPY text format: backslash, tab, newline and carriage return escaped. */
function copyField(value: string | number): string {
  return typeof value === 'number'
    ? String(value)
    : value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

export function copyText(rows: readonly RawRow[]): Buffer {
  return Buffer.from(`${rows.map((r) => r.map(copyField).join('\t')).join('\n')}\n`, 'utf8');
}

/** The connection methods a COPY FROM STDIN uses (pg's Connection). */
interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

/** A `pg` query object running `COPY … FROM STDIN` with `data` as the whole input. */
class CopyFrom {
  callback?: (err: Error | null) => void;
  private error: Error | null = null;
  constructor(
    private readonly text: string,
    private readonly data: Buffer,
  ) {}
  submit(connection: CopyConnection): void {
    connection.query(this.text);
  }
  handleCopyInResponse(connection: CopyConnection): void {
    connection.sendCopyFromChunk(this.data);
    connection.endCopyFrom();
  }
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handleError(err: Error): void {
    this.error = err;
  }
  handleReadyForQuery(): void {
    this.callback?.(this.error);
  }
}

/** Runs one COPY on a raw `pg` client. */
function copy(client: { query(q: CopyFrom): unknown }, text: string, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const q = new CopyFrom(text, data);
    q.callback = (err) => (err ? reject(err) : resolve());
    client.query(q);
  });
}

const RAW_TABLE = `DROP TABLE IF EXISTS bench_raw;
CREATE TABLE bench_raw (id BIGINT GENERATED ALWAYS AS IDENTITY, project_id BIGINT, received_at BIGINT, ts BIGINT, level SMALLINT, bytes INTEGER, body TEXT)`;

export interface PgCeilings {
  copy: number;
  unnestInsert: number;
  /** CPU µs of the PostgreSQL backends per row, for each (null without /proc). */
  copyCpu: number | null;
  unnestCpu: number | null;
}

/**
 * Rows per second into an unindexed table through COPY and through an
 * unnest INSERT, `rows` of each, 500 per transaction, from `writers`
 * connections (the service writes up to 4 transactions at once).
 */
export async function measurePgCeilings(db: BenchDatabase, pool: BatchPool, rows: number, writers: number): Promise<PgCeilings> {
  const s = db.settings;
  const pgp = pgPromise({ noWarnings: true });
  const conn = pgp({
    host: s.dbServerHost!,
    port: s.dbServerPort!,
    database: s.dbServerDatabase!,
    user: s.dbServerUsername!,
    password: s.dbServerPassword!,
    max: writers,
  });
  // Prepared off the clock: the ceiling is PostgreSQL's, not this loader's.
  const batches = pool.bodies.map((_, i) => rawRows(pool, i, 1 + (i % 10)));
  const texts = batches.map(copyText);
  const perBatch = batches[0]!.length;
  const backends = await pgBackendsCpu(db);
  let cpu: number | null = null;
  const run = async (write: (client: any, b: number) => Promise<void>): Promise<number> => {
    await conn.none(RAW_TABLE);
    let next = 0;
    const cpu0 = await backends.read();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: writers }, async () => {
        const c = await conn.connect();
        try {
          for (let b = next++; b * perBatch < rows; b = next++) {
            await c.client.query('BEGIN');
            await write(c.client, b % batches.length);
            await c.client.query('COMMIT');
          }
        } finally {
          c.done();
        }
      }),
    );
    const rate = rows / ((performance.now() - started) / 1000);
    const used = (await backends.read()) - cpu0;
    cpu = used > 0 ? (used * 1000) / rows : null;
    return rate;
  };
  try {
    const copyRate = await run((client, b) => copy(client, 'COPY bench_raw (project_id, received_at, ts, level, bytes, body) FROM STDIN', texts[b]!));
    const copyCpu = cpu;
    const unnestRate = await run((client, b) => {
      const cols = [0, 1, 2, 3, 4, 5].map((k) => batches[b]!.map((r) => r[k]));
      return client.query(
        `INSERT INTO bench_raw (project_id, received_at, ts, level, bytes, body)
         SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::smallint[], $5::int[], $6::text[])`,
        cols,
      );
    });
    await conn.none('DROP TABLE IF EXISTS bench_raw');
    return { copy: copyRate, unnestInsert: unnestRate, copyCpu, unnestCpu: cpu };
  } finally {
    await backends.close();
    await conn.$pool.end();
  }
}
