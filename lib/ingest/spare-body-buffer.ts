/**
 * One reusable buffer for large ingestion bodies, lent to one request at a
 * time (see request-body.ts). Large bodies mostly come one at a time
 * (the ingest byte budget), and a fresh 10 MiB buffer per request is memory
 * only a full garbage collection gives back, which V8 runs late: four
 * clients sending 10 MiB bodies left ~40 MB of dead buffers waiting.
 */
/** Bodies at least this large use the spare buffer. */
export const SPARE_BODY_MIN_BYTES = 1024 * 1024;

/** One reusable body buffer, lent to one request at a time. */
export class SpareBodyBuffer {
  private buffer: Buffer | null = null;
  private lent = false;

  constructor(private readonly capacity: number) {}

  /** A buffer of `size` bytes and the function giving it back, or null when lent out or not worth it. */
  lend(size: number): { buffer: Buffer; giveBack: () => void } | null {
    if (this.lent || size < SPARE_BODY_MIN_BYTES || size > this.capacity) return null;
    this.buffer ??= Buffer.allocUnsafeSlow(this.capacity);
    this.lent = true;
    let returned = false;
    return {
      buffer: this.buffer.subarray(0, size),
      giveBack: () => {
        if (returned) return;
        returned = true;
        this.lent = false;
      },
    };
  }
}
