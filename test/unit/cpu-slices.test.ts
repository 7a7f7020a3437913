// CpuSlices stops and continues a real process from its own thread; the
// pause it takes follows Linux's CPU pressure (PSI) where that can be read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { CpuSlices, nextPause } from '../../lib/auth/cpu-slices.js';
import { processState } from '../support/proc.js';

const BOUNDS = { minPauseMs: 1, maxPauseMs: 40, stallShare: 0.1 };

function spinner(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

function cpuPressureReadable(): boolean {
  try {
    return /total=\d+/.test(readFileSync('/proc/pressure/cpu', 'latin1'));
  } catch {
    return false;
  }
}

async function waitUntil(check: () => boolean, what: () => string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('adaptive pauses', () => {
  it('double after a slice in which tasks waited for a CPU, up to the maximum', () => {
    // 4 ms measured, 10 %: more than 400 µs of waiting is contention.
    assert.equal(nextPause(1, 401, 4, BOUNDS), 2);
    assert.equal(nextPause(32, 5000, 4, BOUNDS), 40);
    assert.equal(nextPause(40, 5000, 4, BOUNDS), 40);
  });

  it('halve after a slice without, down to the minimum', () => {
    assert.equal(nextPause(40, 400, 4, BOUNDS), 20);
    assert.equal(nextPause(1.5, 0, 4, BOUNDS), 1);
  });
});

describe('CPU slices', () => {
  it('stops and continues the process, and leaves it running when slicing ends', async () => {
    const target = spinner();
    const slices = new CpuSlices({ runMs: 5, pauseMs: 10 });
    try {
      slices.start(target.pid!);
      const seen = new Set<string>();
      await waitUntil(
        () => (seen.add(processState(target.pid!) ?? '?'), seen.has('T') && seen.has('R')),
        () => `states seen: ${[...seen]}`,
      );
      slices.end();
      for (let i = 0; i < 30; i++) {
        assert.notEqual(processState(target.pid!), 'T');
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    } finally {
      slices.close();
      target.kill('SIGKILL');
    }
  });

  it('pauses as long as it may while the CPUs are contended (fixed pauses where pressure cannot be read)', async () => {
    const target = spinner();
    // More busy processes than cores: some task is always waiting for one.
    const others = Array.from({ length: availableParallelism() + 1 }, spinner);
    const slices = new CpuSlices({ runMs: 5, pauseMs: 10, adaptive: BOUNDS });
    const expected = cpuPressureReadable() ? BOUNDS.maxPauseMs : 10;
    try {
      slices.start(target.pid!);
      await waitUntil(
        () => slices.currentPauseMs === expected,
        () => `pause ${slices.currentPauseMs} ms, expected ${expected}`,
      );
    } finally {
      slices.close();
      for (const child of [target, ...others]) child.kill('SIGKILL');
    }
  });
});
