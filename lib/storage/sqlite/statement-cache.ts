/**
 * Prepared statements kept per connection. node-sqlite3's
 * `Database#run/all/get(sql)` prepares a statement, runs it and finalizes
 * it: three trips through libuv's thread pool, each finished only when the
 * event loop gets to its completion, which under load is most of a
 * statement's latency. A statement prepared once is re-run in one trip.
 *
 * A statement object runs one call at a time, and node-sqlite3 starts the
 * next queued call only from the event loop, after the previous one's
 * completion: callers of the same text at once would wait for each other
 * and for the loop. So a text keeps as many statements as it has had
 * callers at once, each lent to one caller.
 *
 * Statements are always run to completion (`all`, `run`): a statement left
 * mid-result would keep its connection's read snapshot open.
 */
import type { Database, Statement } from 'sqlite';

/** Statements kept per connection; the SQL texts are constants, so this is a safety bound. */
const MAX_STATEMENTS = 128;

interface Text {
  /** Prepared statements not lent out. */
  idle: Statement[];
  /** Statements lent out. */
  lent: number;
}

export class StatementCache {
  /** By SQL text, least recently used first. */
  private readonly texts = new Map<string, Text>();
  /** Statements prepared and not finalized (idle and lent). */
  private held = 0;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Finalizations under way, which the connection must not close before. */
  private readonly finalizing = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly db: Database) {}

  /** Runs `work` on a prepared statement of `sql` that no other caller is using. */
  use<T>(sql: string, work: (statement: Statement) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the connection is closing'));
    const run = this.lend(sql, work);
    this.inFlight.add(run);
    const forget = () => this.inFlight.delete(run);
    run.then(forget, forget);
    return run;
  }

  /** Waits for the statements lent out, then finalizes every statement; the connection can then close. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    for (const text of this.texts.values()) for (const statement of text.idle) this.finalize(statement);
    this.texts.clear();
    await Promise.allSettled([...this.finalizing]);
  }

  private async lend<T>(sql: string, work: (statement: Statement) => Promise<T>): Promise<T> {
    let text = this.texts.get(sql);
    if (text === undefined) text = { idle: [], lent: 0 };
    // Most recently used last, so eviction takes the least recently used.
    this.texts.delete(sql);
    this.texts.set(sql, text);
    text.lent += 1;
    let statement: Statement;
    try {
      statement = text.idle.pop() ?? (await this.prepare(sql));
    } catch (err) {
      // A statement that fails to prepare is not kept: the next use tries again.
      text.lent -= 1;
      throw err;
    }
    try {
      return await work(statement);
    } finally {
      text.lent -= 1;
      if (!this.closed && this.texts.get(sql) === text) text.idle.push(statement);
      else this.finalize(statement);
      this.evict();
    }
  }

  private async prepare(sql: string): Promise<Statement> {
    const statement = await this.db.prepare(sql);
    this.held += 1;
    return statement;
  }

  private finalize(statement: Statement): void {
    this.held -= 1;
    const done = statement.finalize().catch(() => undefined);
    this.finalizing.add(done);
    void done.then(() => this.finalizing.delete(done));
  }

  /** Finalizes idle statements of the least recently used texts while over the bound. */
  private evict(): void {
    for (const [sql, text] of this.texts) {
      if (this.held <= MAX_STATEMENTS) return;
      while (text.idle.length > 0 && this.held > MAX_STATEMENTS) this.finalize(text.idle.pop()!);
      if (text.idle.length === 0 && text.lent === 0) this.texts.delete(sql);
    }
  }
}
