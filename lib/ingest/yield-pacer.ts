/**
 * When a long preparation loop lets the event loop run other work. The
 * loop over a body's elements or lines (plain-body.ts: valid or not, JSON
 * arrays and NDJSON, whole or element by element) calls `due` after each
 * element and yields when it says so: after SLICE_MS of work,
 * SLICE_ELEMENTS elements or SLICE_BYTES of element text since the last
 * yield, whichever comes first. Time is the guard that holds whatever an
 * element costs; the counts keep slices short even on a clock that reads
 * coarsely.
 */

/** Work between two turns of the event loop: a request waiting behind a batch waits about this long. */
export const SLICE_MS = 10;
/** Elements between two turns whatever the clock says (a few milliseconds of usual entries). */
export const SLICE_ELEMENTS = 256;
/** Element text between two turns whatever the clock says (well under a slice at parsing and indexing speed). */
export const SLICE_BYTES = 256 * 1024;

/** Lets the event loop run everything ready before the work goes on. */
const yieldToLoop = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** Counts one loop's work since its last yield. */
export class YieldPacer {
  private sliceStart = performance.now();
  private elements = 0;
  private bytes = 0;
  /** Turns of the event loop given so far (for tests). */
  yields = 0;

  /** Notes one element of `bytes` bytes; true when the loop should now `await pause()`. */
  due(bytes = 0): boolean {
    this.elements += 1;
    this.bytes += bytes;
    return this.elements >= SLICE_ELEMENTS || this.bytes >= SLICE_BYTES || performance.now() - this.sliceStart >= SLICE_MS;
  }

  /** Yields to the event loop and starts a new slice. */
  async pause(): Promise<void> {
    await yieldToLoop();
    this.yields += 1;
    this.elements = 0;
    this.bytes = 0;
    this.sliceStart = performance.now();
  }
}
