/**
 * Where plain (non-transactional) reads run. With reader connections, each
 * statement goes to the least busy one; WAL shows it only committed data.
 * Without readers, statements run on the writer but take the writer mutex
 * first, so they never observe a transaction that is still open.
 */
import type { Database } from 'sqlite';
import { connectionExecutor, type SqlExecutor } from './connection.js';
import type { AsyncMutex } from './mutex.js';

interface PooledReader {
  executor: SqlExecutor;
  inFlight: number;
}

/** Readers running a statement, and statements queued behind another on the same reader. */
export interface ReaderLoad {
  inUse: number;
  waiting: number;
}

/** An executor spreading statements over `readers` by fewest in flight. */
export function readerPoolExecutor(readers: readonly Database[]): SqlExecutor & { load(): ReaderLoad } {
  if (readers.length === 0) throw new Error('readerPoolExecutor needs at least one reader');
  const pool: PooledReader[] = readers.map((db) => ({ executor: connectionExecutor(db), inFlight: 0 }));
  const leastBusy = (): PooledReader => pool.reduce((best, r) => (r.inFlight < best.inFlight ? r : best));
  async function onReader<T>(work: (e: SqlExecutor) => Promise<T>): Promise<T> {
    const reader = leastBusy();
    reader.inFlight += 1;
    try {
      return await work(reader.executor);
    } finally {
      reader.inFlight -= 1;
    }
  }
  return {
    all: (sql, params) => onReader((e) => e.all(sql, params)),
    get: (sql, params) => onReader((e) => e.get(sql, params)),
    run: (sql, params) => onReader((e) => e.run(sql, params)),
    load() {
      let inUse = 0;
      let waiting = 0;
      for (const r of pool) {
        if (r.inFlight > 0) inUse += 1;
        waiting += Math.max(0, r.inFlight - 1);
      }
      return { inUse, waiting };
    },
  };
}

/** An executor on the writer that waits for the writer mutex per statement. */
export function lockedWriterExecutor(writer: SqlExecutor, mutex: AsyncMutex): SqlExecutor {
  return {
    all: (sql, params) => mutex.runExclusive(() => writer.all(sql, params)),
    get: (sql, params) => mutex.runExclusive(() => writer.get(sql, params)),
    run: (sql, params) => mutex.runExclusive(() => writer.run(sql, params)),
  };
}
