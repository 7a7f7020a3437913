/**
 * V8 lets a busy process's heap grow well past its live data before a full
 * collection when the machine has memory to spare: with four clients
 * sending 10 MiB bodies, logkeep's live heap stayed near 50–60 MB while its
 * RSS peaked at ~280–400 MiB. The heap limit can only be set when the
 * process starts, but the growth factor is read at each collection, so a
 * process running logkeep can lower it at any time: at 10 % the same load
 * peaked at ~250 MiB (20 %: ~257, V8's default: ~280–400), at no
 * measurable cost in entries per second (bench/ingest.ts). It is a process-wide V8 setting, so the library never
 * changes it on its own; the bin calls this at start, and an embedding
 * server may too.
 */
import { setFlagsFromString } from 'node:v8';

/** The heap growth per full collection the bin runs with, in percent. */
export const SERVICE_HEAP_GROWTH_PERCENT = 10;

export function limitHeapGrowth(percent: number = SERVICE_HEAP_GROWTH_PERCENT): void {
  if (!Number.isInteger(percent) || percent < 1 || percent > 1000) throw new RangeError(`heap growth must be an integer percentage from 1 to 1000, got ${percent}`);
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
