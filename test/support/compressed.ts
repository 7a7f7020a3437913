/** Compressed test bodies built by streaming, never holding their inflated bytes. */
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';

/** A stream of `total` zero bytes, made as it is read. */
export function zeros(total: number, chunk = 64 * 1024): Readable & { produced: () => number } {
  const block = Buffer.alloc(chunk);
  let produced = 0;
  const stream = new Readable({
    read() {
      if (produced >= total) {
        this.push(null);
        return;
      }
      const n = Math.min(chunk, total - produced);
      produced += n;
      this.push(n === chunk ? block : block.subarray(0, n));
    },
  });
  return Object.assign(stream, { produced: () => produced });
}

/** The gzip of `total` zero bytes (about a thousandth of its size). */
export async function gzipOfZeros(total: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of zeros(total).pipe(createGzip({ level: 9 }))) parts.push(part as Buffer);
  return Buffer.concat(parts);
}
