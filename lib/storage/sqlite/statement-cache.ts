/**
 * Prepared statements kept per connection. node-sqlite3's
 * `Database#run/all/get(sql)` prepares a statement, runs it and finalizes
 * it: three trips through libuv's thread pool, each finished only when the
 * event loop gets to its completion, which under load is most of a
 * statement's latency (a small group commit's seven statements took
 * ~10 ms, mostly waiting). A statement prepared once is re-run in one trip.
 *
 * Statements are always run to completion (`all`, `run`): a statement left
 * mid-result would keep its connection's read snapshot open.
 */
import type { Database, Statement } from 'sqlite';

/** Statements kept per connection; the SQL texts are constants, so this is a safety bound. */
const MAX_STATEMENTS = 128;

export class StatementCache {
  private readonly statements = new Map<string, Promise<Statement>>();
  private closed = false;

  constructor(private readonly db: Database) {}

  /** The connection's prepared statement for `sql`, prepared on first use. */
  statement(sql: string): Promise<Statement> {
    if (this.closed) return Promise.reject(new Error('the connection is closing'));
    const known = this.statements.get(sql);
    if (known !== undefined) {
      // Most recently used last, so eviction takes the least recently used.
      this.statements.delete(sql);
      this.statements.set(sql, known);
      return known;
    }
    const prepared = this.db.prepare(sql);
    this.statements.set(sql, prepared);
    // A statement that fails to prepare is not kept: the next use tries again.
    prepared.catch(() => {
      if (this.statements.get(sql) === prepared) this.statements.delete(sql);
    });
    if (this.statements.size > MAX_STATEMENTS) {
      const [oldest, evicted] = this.statements.entries().next().value as [string, Promise<Statement>];
      this.statements.delete(oldest);
      // Queued behind the statement's pending runs, so they finish first.
      evicted.then((s) => s.finalize()).catch(() => undefined);
    }
    return prepared;
  }

  /** Finalizes every statement; the connection can then close. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.statements.values()];
    this.statements.clear();
    await Promise.allSettled(all.map(async (p) => (await p).finalize()));
  }
}
