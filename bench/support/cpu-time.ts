/**
 * CPU time spent by the processes under test, which on a shared 2-core
 * machine says more than a rate does: the service's process (its worker
 * threads included) and the PostgreSQL backends serving one database.
 * Read from /proc (Linux); null elsewhere.
 */
import { readFileSync } from 'node:fs';
import pgPromise from 'pg-promise';
import type { BenchDatabase } from './harness.js';

const TICKS_PER_SECOND = 100;

/** utime + stime of a process, in ms, or 0 when it is gone or /proc is absent. */
export function processCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** utime + stime of a process's main thread (its event loop), in ms, or 0. */
export function mainThreadCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuMs(path: string): number {
  try {
    const stat = readFileSync(path, 'utf8');
    // Fields after the command name (which may hold spaces) in parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Reads the CPU time of the PostgreSQL backends connected to the database (other than its own). */
export async function pgBackendsCpu(db: BenchDatabase): Promise<{ read(): Promise<number>; close(): Promise<void> }> {
  const s = db.settings;
  const pgp = pgPromise({ noWarnings: true });
  const conn = pgp({
    host: s.dbServerHost!,
    port: s.dbServerPort!,
    database: s.dbServerDatabase!,
    user: s.dbServerUsername!,
    password: s.dbServerPassword!,
    max: 1,
  });
  const seen = new Map<number, number>();
  return {
    /** Total CPU ms of every backend seen so far (a backend keeps its last reading after it exits). */
    async read() {
      const rows = await conn.any<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      for (const { pid } of rows) {
        const ms = processCpuMs(pid);
        if (ms > 0) seen.set(pid, ms);
      }
      let total = 0;
      for (const ms of seen.values()) total += ms;
      return total;
    },
    close: () => conn.$pool.end(),
  };
}

/**
 * CPU time the whole machine spent busy (every core, every process), in ms,
 * from /proc/stat; 0 where it is absent. Less the processes under test, it
 * is what other work on a shared machine took meanwhile.
 */
export function machineBusyMs(): number {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    // user nice system idle iowait irq softirq steal: all but idle and iowait.
    const busy = fields.reduce((sum, n) => sum + n, 0) - fields[3]! - fields[4]!;
    return (busy * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}
