/**
 * V8 lets a busy process's heap grow well past its live data before a full
 * collection when the machine has memory to spare: under large bodies
 * logkeep's RSS peaked at several times its live heap. The heap limit can
 * only be set when the process starts, but the growth factor is read at
 * each collection, so a process running logkeep can lower it at any time,
 * which lowered the peak at no measurable cost in entries per second
 * (docs/measurements.md, "Memory"). It is a process-wide V8 setting, so the library never
 * changes it on its own; the bin calls this at start, and an embedding
 * server may too.
 */
import { setFlagsFromString } from 'node:v8';

/** The heap growth per full collection the bin runs with, in percent. */
export const SERVICE_HEAP_GROWTH_PERCENT = 10;

export function limitHeapGrowth(percent: number = SERVICE_HEAP_GROWTH_PERCENT): void {
  if (!Number.isInteger(percent) || percent < 1 || percent > 1000)
    throw new RangeError(`heap growth must be an integer percentage from 1 to 1000, got ${percent}`);
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
