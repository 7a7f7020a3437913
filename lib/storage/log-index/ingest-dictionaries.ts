/**
 * The newest dictionary of each project, as the preparation thread seals
 * large requests with it (presealed.ts), cached so a request costs no
 * read. A dictionary changes only when sealing renews it (every
 * DICTIONARY_EVERY_BLOCKS blocks) and the transaction writes a presealed
 * block only while its dictionary is still the project's newest, so a
 * stale entry here costs at most FOUND_TTL_MS of requests going to the
 * tail; a project without one is asked again after MISSING_TTL_MS (its
 * first seal makes one).
 */
import type { SealDictionary } from './sealed-block.js';

export const FOUND_TTL_MS = 30_000;
export const MISSING_TTL_MS = 2_000;
/** Projects remembered at once (each up to 32 KiB). */
export const MAX_REMEMBERED = 256;

interface Remembered {
  dictionary: Promise<SealDictionary | null>;
  until: number;
}

export class IngestDictionaries {
  private readonly remembered = new Map<number, Remembered>();

  constructor(
    private readonly load: (projectId: number) => Promise<SealDictionary | null>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The project's newest dictionary (null: none yet, or it could not be read). */
  get(projectId: number): Promise<SealDictionary | null> {
    const now = this.now();
    const hit = this.remembered.get(projectId);
    if (hit !== undefined && hit.until > now) return hit.dictionary;
    this.remembered.delete(projectId);
    const entry: Remembered = { dictionary: Promise.resolve(null), until: now + MISSING_TTL_MS };
    entry.dictionary = this.load(projectId).then(
      (dictionary) => {
        if (dictionary !== null) entry.until = this.now() + FOUND_TTL_MS;
        return dictionary;
      },
      // Unreadable now: the request goes to the tail, and the next one asks again soon.
      () => null,
    );
    this.remembered.set(projectId, entry);
    // Oldest first out (a Map keeps insertion order).
    for (const key of this.remembered.keys()) {
      if (this.remembered.size <= MAX_REMEMBERED) break;
      this.remembered.delete(key);
    }
    return entry.dictionary;
  }

  /** Forgets a project's dictionary (a transaction found a newer one). */
  forget(projectId: number): void {
    this.remembered.delete(projectId);
  }
}
