// Reading a process's state from Linux's /proc, for tests of the hashing process.
import { readFileSync } from 'node:fs';

/** The state letter of `pid` (R running, S sleeping, T stopped …), or null once it is gone. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0]!;
  } catch {
    return null;
  }
}
