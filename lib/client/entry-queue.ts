/**
 * The ingestion client's buffer: serialised entries in arrival order, with
 * their total size kept as they come and go. Taking from the front is O(1)
 * amortised (a head index, compacted now and then) because dropping the
 * oldest entry happens once per `log()` call when the buffer is full.
 */

/** One entry waiting to be sent: its JSON text, ready to join into a batch. */
export interface QueuedEntry {
  /** Position in `log()` order, from 1; `flush()` waits by it. */
  seq: number;
  json: string;
  /** UTF-8 length of `json`. */
  bytes: number;
  /** Clock time when it entered the buffer (the time trigger's start). */
  queuedAt: number;
}

export class EntryQueue {
  private items: QueuedEntry[] = [];
  private head = 0;
  private totalBytes = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  /** Sum of the queued entries' JSON sizes. */
  get bytes(): number {
    return this.totalBytes;
  }

  peek(): QueuedEntry | undefined {
    return this.items[this.head];
  }

  push(entry: QueuedEntry): void {
    this.items.push(entry);
    this.totalBytes += entry.bytes;
  }

  shift(): QueuedEntry | undefined {
    if (this.length === 0) return undefined;
    const entry = this.items[this.head++]!;
    this.totalBytes -= entry.bytes;
    this.compact();
    return entry;
  }

  /**
   * Removes the longest prefix that fits one request: at most `maxEntries`
   * entries and a JSON array body of at most `maxBodyBytes` (brackets and
   * commas included). The first entry is always taken, even when it alone is
   * larger, so an oversized entry is sent (and refused by the server) rather
   * than stuck forever.
   */
  takeBatch(maxEntries: number, maxBodyBytes: number): QueuedEntry[] {
    let end = this.head;
    let body = 2;
    while (end < this.items.length && end - this.head < maxEntries) {
      const add = this.items[end]!.bytes + (end > this.head ? 1 : 0);
      if (end > this.head && body + add > maxBodyBytes) break;
      body += add;
      end++;
    }
    const batch = this.items.slice(this.head, end);
    for (const entry of batch) this.totalBytes -= entry.bytes;
    this.head = end;
    this.compact();
    return batch;
  }

  /** Size of the JSON array body holding every queued entry. */
  bodyBytes(): number {
    return this.length === 0 ? 2 : this.totalBytes + this.length + 1;
  }

  private compact(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
