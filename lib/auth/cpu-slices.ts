/**
 * Runs a child process in short slices: `runMs` running, then a pause
 * stopped (SIGSTOP / SIGCONT), for as long as it has work. Where Linux
 * reports CPU pressure (PSI, /proc/pressure/cpu) the pause follows it:
 * longer while tasks wait for a CPU, short when none do.
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
 * The signals come from a thread of their own, which sleeps on shared
 * memory between them. Timers on the service's event loop fired late
 * whenever it was busy, and busy is when the slices matter: under
 * ingestion one run slice in nine lasted over 8 ms instead of 5, the
 * longest 50 ms.
 *
 * Why adaptive: fixed 5/10 slices cost every login ~3× its CPU time even
 * on an idle machine, and still took a third of a core from a loaded one.
 * With pgbench at about half this machine's capacity as the load, hashes
 * back to back in 5/10 slices raised its p99 by ~10–28 ms over three
 * alternating measurements, with pauses of 1–40 ms by ~1–19 ms; idle, a
 * hash takes ~0.2 s instead of ~0.5 s.
 *
 * A stopped child cannot notice its parent dying, so every child still
 * stopped is continued when this process exits. A parent that dies of a
 * signal it does not handle skips that ('exit' is not emitted): SIGKILL
 * always, SIGTERM or SIGINT in a host without handlers (the bin handles
 * both). A child left stopped that way is continued by the kernel once
 * its process group is orphaned (a shell's job, a script's children), or
 * ended with the rest of a service manager's unit or a container.
 */
import { Worker } from 'node:worker_threads';

export interface SliceTiming {
  runMs: number;
  /** The pause after each run slice; always, where CPU pressure cannot be read. */
  pauseMs: number;
  /** Where Linux reports CPU pressure (PSI): pauses that follow it instead. */
  adaptive?: AdaptivePauses;
}

/**
 * After a run slice in which tasks waited for a CPU longer than
 * `stallShare` of it, the pause doubles (up to `maxPauseMs`); after one
 * without, it halves (down to `minPauseMs`).
 */
export interface AdaptivePauses {
  minPauseMs: number;
  maxPauseMs: number;
  stallShare: number;
}

/** Words of the memory shared with the slicing thread. */
const TARGET = 0; // pid to slice; 0: none (wait), -1: the thread ends
const LOCK = 1; // 1 while one side signals, so that a SIGSTOP never lands after end() or exit
const STOPPED = 2; // pid the thread stopped and has not continued yet, else 0
const PAUSE_US = 3; // the pause the thread takes now, in microseconds (diagnostics, tests)
const WORDS = 4;

/** The pause after a run slice in which tasks waited `waitedUs` for a CPU over `measuredMs`. */
export function nextPause(pause: number, waitedUs: number, measuredMs: number, bounds: AdaptivePauses): number {
  if (waitedUs > bounds.stallShare * measuredMs * 1000) return Math.min(bounds.maxPauseMs, pause * 2);
  return Math.max(bounds.minPauseMs, pause / 2);
}

/**
 * The slicing thread, as source: a Worker cannot load a .ts file under tsx
 * on Node 20, and this runs from source (tests) and compiled alike. It has
 * no event loop work; it only waits on TARGET with a timeout.
 */
const SLICER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const words = new Int32Array(workerData.shared);
const { runMs, pauseMs, adaptive: bounds } = workerData;
const nextPause = ${nextPause.toString()};
const lock = () => { while (Atomics.compareExchange(words, ${LOCK}, 0, 1) !== 0); };
const unlock = () => Atomics.store(words, ${LOCK}, 0);
const signal = (pid, name) => { try { process.kill(pid, name); return true; } catch { return false; } };
// Microseconds that some task has waited for a CPU since boot (Linux PSI), or null.
const stalled = () => { try { return Number(/total=(\\d+)/.exec(readFileSync('/proc/pressure/cpu', 'latin1'))[1]); } catch { return null; } };
const adaptive = bounds !== null && stalled() !== null;
let pause = adaptive ? bounds.minPauseMs : pauseMs;
Atomics.store(words, ${PAUSE_US}, Math.round(pause * 1000));
for (;;) {
  const pid = Atomics.load(words, ${TARGET});
  if (pid < 0) break;
  if (pid === 0) { Atomics.wait(words, ${TARGET}, 0); continue; }
  // Measured from a millisecond in: continuing a process wakes all its threads at once.
  if (adaptive && Atomics.wait(words, ${TARGET}, pid, 1) !== 'timed-out') continue;
  const before = adaptive ? stalled() : 0;
  if (Atomics.wait(words, ${TARGET}, pid, adaptive ? runMs - 1 : runMs) !== 'timed-out') continue;
  if (adaptive) {
    pause = nextPause(pause, stalled() - before, runMs - 1, bounds);
    Atomics.store(words, ${PAUSE_US}, Math.round(pause * 1000));
  }
  lock();
  const stop = Atomics.load(words, ${TARGET}) === pid && signal(pid, 'SIGSTOP');
  if (stop) Atomics.store(words, ${STOPPED}, pid);
  unlock();
  if (!stop) continue;
  Atomics.wait(words, ${TARGET}, pid, pause);
  lock();
  if (Atomics.load(words, ${STOPPED}) === pid) { signal(pid, 'SIGCONT'); Atomics.store(words, ${STOPPED}, 0); }
  unlock();
}
`;

/** Every slicer with a thread, for the exit hook. */
const live = new Set<CpuSlices>();
let exitHookInstalled = false;

function continueAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const slices of live) slices.release(true);
  });
}

export class CpuSlices {
  private words: Int32Array | null = null;

  constructor(private readonly timing: SliceTiming) {}

  /** Slicing works where signals can stop a process (not on Windows). */
  static supported(): boolean {
    return process.platform !== 'win32';
  }

  /** The pause between run slices now, in ms (null before the thread has started). */
  get currentPauseMs(): number | null {
    const us = this.words ? Atomics.load(this.words, PAUSE_US) : 0;
    return us > 0 ? us / 1000 : null;
  }

  /** Starts slicing the process `pid` (no-op if it is already being sliced). */
  start(pid: number): void {
    const words = this.words ?? this.spawn();
    if (Atomics.load(words, TARGET) === pid) return;
    this.release(false);
    Atomics.store(words, TARGET, pid);
    Atomics.notify(words, TARGET);
  }

  /** Stops slicing and leaves the process running. */
  end(): void {
    this.release(false);
  }

  /** Stops slicing and ends the thread (it is started again by start()). */
  close(): void {
    if (!this.words) return;
    this.release(false);
    Atomics.store(this.words, TARGET, -1);
    Atomics.notify(this.words, TARGET);
    live.delete(this);
    this.words = null;
  }

  /**
   * Continues the process if the thread stopped it, and tells the thread to
   * leave it alone. On exit the lock is kept, so no signal can follow.
   */
  release(exiting: boolean): void {
    const words = this.words;
    if (!words) return;
    while (Atomics.compareExchange(words, LOCK, 0, 1) !== 0);
    Atomics.store(words, TARGET, exiting ? -1 : 0);
    const stopped = Atomics.exchange(words, STOPPED, 0);
    if (stopped > 0) {
      try {
        process.kill(stopped, 'SIGCONT');
      } catch {
        // it has exited: nothing to continue
      }
    }
    if (!exiting) Atomics.store(words, LOCK, 0);
    Atomics.notify(words, TARGET);
  }

  private spawn(): Int32Array {
    const shared = new SharedArrayBuffer(WORDS * Int32Array.BYTES_PER_ELEMENT);
    const words = new Int32Array(shared);
    const worker = new Worker(SLICER_SOURCE, {
      eval: true,
      // Not the host's flags: --input-type=module would make this source ESM.
      execArgv: [],
      workerData: { shared, runMs: this.timing.runMs, pauseMs: this.timing.pauseMs, adaptive: this.timing.adaptive ?? null },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    worker.on('error', () => undefined); // hashes then run unsliced, as on Windows
    continueAllOnExit();
    live.add(this);
    this.words = words;
    return words;
  }
}
