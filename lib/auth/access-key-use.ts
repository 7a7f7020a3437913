/**
 * Keeps an access key's `last_used_at` without a write per request: a key
 * is written at most once per LAST_USED_RESOLUTION_MS, judged first by the
 * time read with the key (so every process agrees) and then by what this
 * process last wrote (so a burst of concurrent requests writes once).
 */
import type { Storage } from '../storage/storage.js';
import type { AccessKeyRow } from '../storage/types-org.js';

/** How stale `last_used_at` may be: a minute says "in use" as well as a millisecond would, at a write per key per minute at most. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** Keys remembered per process before the memory is cleared (each entry is a few dozen bytes; the database's time still bounds the writes). */
const REMEMBERED_KEYS_MAX = 10_000;

export class AccessKeyUseRecorder {
  private readonly written = new Map<number, number>();

  constructor(private readonly storage: Pick<Storage, 'write'>) {}

  /** Records a use at `now` if the stored time is older than the resolution; awaited, so a listing right after sees it. */
  async record(key: Pick<AccessKeyRow, 'id' | 'lastUsedAt'>, now: number): Promise<void> {
    const stored = Math.max(key.lastUsedAt ?? -Infinity, this.written.get(key.id) ?? -Infinity);
    if (now - stored < LAST_USED_RESOLUTION_MS) return;
    if (this.written.size >= REMEMBERED_KEYS_MAX) this.written.clear();
    this.written.set(key.id, now);
    await this.storage.write((tx) => tx.touchAccessKey(key.id, now));
  }
}
