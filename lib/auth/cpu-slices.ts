/**
 * Runs a child process in short slices: `runMs` running, then `pauseMs`
 * stopped (SIGSTOP / SIGCONT), for as long as it has work.
 *
 * Why: a CPU-bound process that runs for a whole password hash (~150 ms)
 * raised a local PostgreSQL's paced transaction p99 from ~5 to ~25 ms on
 * this 2-core machine whatever its priority (nice 19, SCHED_IDLE and a
 * cgroup with 2 shares all did; the scheduler seems to treat its core as
 * busy and crowd everything else on the other one). The same hashes cut
 * into 10 ms slices with 10 ms pauses raised it to ~12 ms, where resting
 * as long as a hash between whole hashes did not help. Nice values cannot
 * do this; stopping the process can.
 *
 * A stopped child cannot notice its parent dying, so every child still
 * stopped is continued when this process exits. A parent that dies of a
 * signal it does not handle skips that ('exit' is not emitted): SIGKILL
 * always, SIGTERM or SIGINT in a host without handlers (the bin handles
 * both). A child left stopped that way is continued by the kernel once
 * its process group is orphaned (a shell's job, a script's children), or
 * ended with the rest of a service manager's unit or a container.
 */
import type { ChildProcess } from 'node:child_process';

export interface SliceTiming {
  runMs: number;
  pauseMs: number;
}

/** Children stopped right now, continued by one exit hook for the whole process. */
const stopped = new Set<ChildProcess>();
let exitHookInstalled = false;

function continueAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of stopped) signal(child, 'SIGCONT');
  });
}

function signal(child: ChildProcess, name: 'SIGSTOP' | 'SIGCONT'): void {
  try {
    child.kill(name);
  } catch {
    // the child has exited: nothing to stop or continue
  }
}

export class CpuSlices {
  private timer: NodeJS.Timeout | null = null;
  private child: ChildProcess | null = null;

  constructor(private readonly timing: SliceTiming) {}

  /** Slicing works where signals can stop a process (not on Windows). */
  static supported(): boolean {
    return process.platform !== 'win32';
  }

  /** Starts slicing `child` (no-op if it is already being sliced). */
  start(child: ChildProcess): void {
    if (this.child === child) return;
    this.end();
    continueAllOnExit();
    this.child = child;
    this.schedulePause();
  }

  /** Stops slicing and leaves the child running. */
  end(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const child = this.child;
    this.child = null;
    if (child && stopped.delete(child)) signal(child, 'SIGCONT');
  }

  private schedulePause(): void {
    this.timer = setTimeout(() => {
      const child = this.child;
      if (!child) return;
      stopped.add(child);
      signal(child, 'SIGSTOP');
      this.timer = setTimeout(() => {
        stopped.delete(child);
        signal(child, 'SIGCONT');
        this.schedulePause();
      }, this.timing.pauseMs).unref();
    }, this.timing.runMs).unref();
  }
}
