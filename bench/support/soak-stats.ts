/**
 * Arithmetic and parsing for the soak benchmark: a least-squares slope,
 * and the two memory gauges read from the service's `/metrics` text.
 */

export interface Sample {
  /** Seconds since the soak started. */
  t: number;
  rss: number;
  heapUsed: number;
  /** V8's heap as reserved, and memory outside it held by JS objects (Buffers): where RSS beyond the heap goes. */
  heapTotal: number;
  external: number;
  /**
   * Read from the service process itself when the soak asks for them
   * (`--detail`): `process.memoryUsage().arrayBuffers`, RSS split by kind
   * from /proc (anonymous, file-backed, shared memory such as SQLite's
   * `-shm`), and the sizes of the database's `-wal` and `-shm` files.
   */
  arrayBuffers?: number;
  rssAnon?: number;
  rssFile?: number;
  rssShmem?: number;
  walBytes?: number;
  shmBytes?: number;
}

/** The sample fields that are byte counts. */
export type MemoryField = Exclude<keyof Sample, 't'>;

/** Least-squares slope of `y` over `x`; NaN with fewer than two points. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

const MIB = 2 ** 20;

/** Slope over the second half of the samples (by time), in MiB per minute. */
export function secondHalfSlope(samples: readonly Sample[], field: MemoryField): number {
  if (samples.length === 0) return NaN;
  const half = samples[samples.length - 1]!.t / 2;
  return slope(samples.filter((s) => s.t >= half && s[field] !== undefined).map((s) => ({ x: s.t / 60, y: s[field]! / MIB })));
}

/** `RssAnon`, `RssFile` and `RssShmem` (bytes) from the text of /proc/PID/status; NaN where missing. */
export function procStatusRss(text: string): { rssAnon: number; rssFile: number; rssShmem: number } {
  const kib = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text);
    return match ? Number(match[1]) * 1024 : NaN;
  };
  return { rssAnon: kib('RssAnon'), rssFile: kib('RssFile'), rssShmem: kib('RssShmem') };
}

/** A gauge's value (the first series of that name) from Prometheus text, or NaN. */
export function gauge(text: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
}

export function memorySample(t: number, metricsText: string): Sample {
  return {
    t,
    rss: gauge(metricsText, 'process_resident_memory_bytes'),
    heapUsed: gauge(metricsText, 'nodejs_heap_size_used_bytes'),
    heapTotal: gauge(metricsText, 'nodejs_heap_size_total_bytes'),
    external: gauge(metricsText, 'nodejs_external_memory_bytes'),
  };
}

/** Counts by kind, printed as `kind ×n, …` or `none`. */
export class Tally {
  readonly counts = new Map<string, number>();
  add(kind: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }
  get total(): number {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }
  toString(): string {
    return this.counts.size === 0 ? 'none' : [...this.counts].map(([k, n]) => `${k} ×${n}`).join(', ');
  }
}
