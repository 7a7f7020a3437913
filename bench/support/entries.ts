/**
 * Deterministic, realistic log entries for the benchmarks: ~400 B of JSON
 * each, a skewed vocabulary (a few common words, a long tail), correlation
 * ids that repeat as they do in real traffic (sessions span many entries,
 * requests a few) and a nested context object.
 */

/** mulberry32: a tiny seeded PRNG, so every run sends the same entries. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'qu', 'dor', 'fen', 'gal', 'hix', 'jun', 'bre', 'cly', 'wem', 'yor'];
const LEVELS = ['debug', 'info', 'info', 'info', 'info', 'warning', 'warning', 'error', 'critical', 'info'] as const;
const EVENTS = [
  'request completed',
  'cache miss',
  'user logged in',
  'payment authorised',
  'job finished',
  'connection reset',
  'disk usage high',
  'token refreshed',
  'query slow',
  'retrying upstream call',
];
const CATEGORIES = ['http', 'db', 'auth', 'jobs', 'cache', 'billing'];
const LOGGERS = ['app.http', 'app.db.pool', 'app.auth', 'worker.jobs', 'app.cache', 'billing.core', 'app.ws'];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];

/** A vocabulary of `size` pseudo-words. */
export function vocabulary(size: number, seed = 7): string[] {
  const rnd = seededRandom(seed);
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(rnd() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rnd() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

export interface EntryGeneratorOptions {
  seed?: number;
  /** Epoch ms of the first entry; each next entry is a few ms later. */
  startMs?: number;
}

/** An endless, deterministic supply of entries. */
export function createEntryGenerator(options: EntryGeneratorOptions = {}): { next(): Record<string, unknown>; vocabulary: string[] } {
  const rnd = seededRandom(options.seed ?? 1);
  const vocab = vocabulary(5000);
  let clock = options.startMs ?? Date.UTC(2024, 0, 1);
  let n = 0;
  // Zipf-like: index ~ size * r^3 makes low indexes (common words) frequent.
  const word = () => vocab[Math.floor(vocab.length * rnd() ** 3)]!;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const hex = (len: number) => {
    let s = '';
    while (s.length < len)
      s += Math.floor(rnd() * 0x100000000)
        .toString(16)
        .padStart(8, '0');
    return s.slice(0, len);
  };
  let requestId = hex(16);
  return {
    vocabulary: vocab,
    next() {
      n += 1;
      clock += Math.floor(rnd() * 5);
      if (n % 4 === 0) requestId = hex(16);
      const words: string[] = [];
      const count = 8 + Math.floor(rnd() * 10);
      for (let i = 0; i < count; i++) words.push(word());
      return {
        timestamp: new Date(clock).toISOString(),
        level: pick(LEVELS),
        event: pick(EVENTS),
        logger: pick(LOGGERS),
        category: pick(CATEGORIES),
        request_id: requestId,
        session_id: `s-${Math.floor(rnd() * 5000)}`,
        message: words.join(' '),
        user: { id: Math.floor(rnd() * 100000), name: `user${Math.floor(rnd() * 2000)}`, plan: pick(['free', 'pro', 'team']) },
        http: {
          method: pick(METHODS),
          path: `/api/v1/${word()}/${Math.floor(rnd() * 10000)}`,
          status: pick([200, 200, 200, 201, 204, 404, 500]),
          duration_ms: Math.round(rnd() * 50000) / 100,
        },
        host: `web-${Math.floor(rnd() * 12)}`,
      };
    },
  };
}
