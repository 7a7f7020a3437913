/**
 * Signals between logkeep processes that share one database: small
 * text messages on named channels, delivered to every listening process
 * (the sender's own listeners included). The server backend implements them
 * with PostgreSQL `LISTEN`/`NOTIFY`; the file backend has none, because one
 * process owns a SQLite file.
 *
 * Delivery is best effort: a message sent while a listener's connection is
 * down is lost, which `onConnected(true)` reports so the listener can
 * re-read what it may have missed.
 */

/** Called on a listener's events. */
export interface SignalHandlers {
  /** A message arrived on one of the channels. */
  onMessage(channel: string, payload: string): void;
  /**
   * The listening connection is established: `reconnected` is false the
   * first time, true after a loss (messages may have been missed meanwhile).
   */
  onConnected?(reconnected: boolean): void;
}

/** A running listener; `close` stops it and releases its connection. */
export interface SignalListener {
  close(): Promise<void>;
}

export interface StorageSignals {
  /** Sends `payload` (at most ~7,900 bytes) on `channel`. */
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Listens on `channels` over a dedicated connection, re-connecting after a
   * loss. Resolves once the first connection attempt finished (listening,
   * or failed and retrying in the background), so a caller that awaits it
   * does not miss messages sent right after.
   */
  listen(channels: readonly string[], handlers: SignalHandlers): Promise<SignalListener>;
}
