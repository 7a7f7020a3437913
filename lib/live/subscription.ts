/**
 * One open live stream: the response it writes to, how far it has been
 * served (`cursor`: every entry up to it was sent or found not to be the
 * stream's; the id of the last entry sent, the catch-up start, or a later
 * id its feed has checked past), and who it was opened for (what
 * re-validation checks at every heartbeat). The client's own position is
 * the `id:` of the last frame it received, never the cursor.
 *
 * A subscription never buffers entries itself. Its feed reads pages from
 * storage by id and hands each page's text to `deliver`; when the socket's
 * buffer is full (`write` returns false) the subscription is `paused` and
 * takes no more pages until the socket drains, then its feed reads from its
 * cursor again. So a slow consumer costs at most one page in memory, and
 * nothing is ever dropped.
 *
 * A reader that takes nothing at all would keep that page forever: a stream
 * still paused at `STALLED_AFTER_BEATS` heartbeats in a row, with no drain
 * between them, is closed without an `end` frame (its buffer is full). The
 * client may reconnect with `Last-Event-ID` and lose nothing.
 */
import type { ServerResponse } from 'node:http';
import { endFrame, PING_FRAME, type StreamEndReason } from './sse.js';
import type { LiveScope } from './live-scope.js';

/** Who opened the stream, as re-validation needs it. */
export interface StreamCaller {
  userId: number;
  /** `tv` of the access token the stream was opened with; null when it was opened with an access key. */
  tokenVersion: number | null;
  /** The access key the stream was opened with, re-checked (revoked, expired) at every heartbeat; null (or absent) for an access token. */
  accessKeyId?: number | null;
}

/** Heartbeats in a row a paused stream may see before it is closed (so one to two intervals of silence). */
export const STALLED_AFTER_BEATS = 2;

export class Subscription {
  /** Where the next read starts: every entry up to it was sent or checked not to match. Null until the stream has started. */
  cursor: number | null = null;
  /** The socket buffer is full: no more pages until it drains. */
  paused = false;
  /** Ended (by us, or the client went away). */
  ended = false;
  /** Ended by us before the stream was opened: the reason still to send. */
  unsentEnd: StreamEndReason | null = null;
  /** Called once the socket drains after a pause. */
  onDrain: (() => void) | null = null;
  /** Called once when the subscription ends, whichever side ended it. */
  onEnded: (() => void) | null = null;
  /** Heartbeats seen in a row while paused, with no drain between them. */
  private pausedBeats = 0;

  constructor(
    readonly res: ServerResponse,
    readonly scope: LiveScope,
    readonly caller: StreamCaller,
  ) {
    res.on('drain', () => {
      if (!this.paused || this.ended) return;
      this.paused = false;
      this.pausedBeats = 0;
      this.onDrain?.();
    });
    // The client went away (or the socket failed): stop serving it.
    res.on('close', () => this.markEnded());
  }

  /** Ready for the next page: started, open and not held back by backpressure. */
  get ready(): boolean {
    return this.cursor !== null && !this.paused && !this.ended;
  }

  /**
   * Writes the text of one page of log frames whose last entry is `lastId`.
   * The whole page is handed to the socket even if its buffer fills part-way
   * (the text is in memory already); the subscription then pauses.
   */
  deliver(pageText: string, lastId: number): void {
    if (this.ended) return;
    this.cursor = lastId;
    if (!this.res.write(pageText)) this.paused = true;
  }

  /**
   * Every entry after the cursor up to `id` was checked and none is for this
   * stream: later reads start after `id`. Nothing is written, so the
   * client's `Last-Event-ID` stays the last entry it was sent; resuming
   * from there re-checks the same entries and finds the same nothing.
   */
  passChecked(id: number): void {
    if (this.ended || this.cursor === null || this.cursor >= id) return;
    this.cursor = id;
  }

  /**
   * A heartbeat: the `: ping` comment, skipped before the stream is open and
   * while paused (bytes are flowing, or the client is stuck and a ping would
   * only queue). Returns true when this heartbeat closed a stalled stream.
   */
  beat(): boolean {
    if (this.ended || this.cursor === null) return false;
    if (!this.paused) {
      this.pausedBeats = 0;
      this.res.write(PING_FRAME);
      return false;
    }
    this.pausedBeats += 1;
    if (this.pausedBeats < STALLED_AFTER_BEATS) return false;
    // Its buffer is full, so no `end` frame could reach it: drop the connection and the page it holds.
    this.res.destroy();
    this.markEnded();
    return true;
  }

  /**
   * Sends the terminal `end` frame and closes the response. Idempotent. A
   * stream not opened yet (its start position is still being read) only
   * records the reason: whoever opens it sends the frame.
   */
  end(reason: StreamEndReason): void {
    if (this.ended) return;
    if (this.cursor === null) this.unsentEnd = reason;
    else this.res.end(endFrame(reason));
    this.markEnded();
  }

  private markEnded(): void {
    if (this.ended) return;
    this.ended = true;
    this.paused = false;
    this.onEnded?.();
  }
}
