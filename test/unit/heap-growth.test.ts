import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { limitHeapGrowth } from '../../lib/heap-growth.js';

describe('limitHeapGrowth', () => {
  it('refuses what is not a percentage', () => {
    for (const bad of [0, -5, 1.5, 1001, Number.NaN]) assert.throws(() => limitHeapGrowth(bad), RangeError);
  });

  it('keeps a process with a steady live set and much garbage far smaller than V8 lets it grow by default', () => {
    // 30 MB live, replaced 40 times: peak RSS with and without the limit, each in a fresh process.
    const program = (limit: boolean) => `
      ${limit ? "require('node:v8').setFlagsFromString('--heap-growing-percent=10');" : ''}
      let live = [], peak = 0;
      for (let round = 0; round < 40; round++) {
        const next = [];
        for (let i = 0; i < 60000; i++) next.push({ s: 'x'.repeat(400) + i, n: i });
        live = next;
        peak = Math.max(peak, process.memoryUsage().rss);
      }
      process.stdout.write(String(peak));`;
    const peak = (limit: boolean) => Number(spawnSync(process.execPath, ['-e', program(limit)], { encoding: 'utf8' }).stdout);
    const limited = peak(true);
    const defaults = peak(false);
    assert.ok(limited > 0 && defaults > 0);
    assert.ok(limited < defaults * 0.85, `limited ${limited >> 20} MiB vs defaults ${defaults >> 20} MiB`);
  });
});
