/**
 * StorageSignals over PostgreSQL `LISTEN`/`NOTIFY`. Sending uses the
 * pool (`pg_notify`, values bound); each listener holds one dedicated
 * connection outside the pool (`connect({direct: true})`), since a pooled
 * connection would be handed to other queries and its LISTEN lost. A lost
 * connection is re-established with capped backoff until the listener closes.
 */
import type pgPromise from 'pg-promise';
import type { ServiceLogger } from '../../core/logger.js';
import type { SignalHandlers, SignalListener, StorageSignals } from '../storage-signals.js';
import { describeConnectionError } from './pg-errors.js';

const NOTIFY = 'SELECT pg_notify($1, $2)';
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

type Client = pgPromise.ILostContext['client'];
type Connection = pgPromise.IConnected<unknown, Client>;
type Notification = { channel: string; payload?: string };

/**
 * Signals over this storage's pool; `closeAll` stops every listener (storage
 * close). `heard` runs at every notification received, before its handler.
 */
export function createPostgresSignals(
  db: pgPromise.IDatabase<unknown>,
  logger: ServiceLogger,
  heard: () => void = () => {},
): StorageSignals & { closeAll(): Promise<void> } {
  const listeners = new Set<PostgresListener>();
  return {
    async notify(channel, payload) {
      // pg_notify returns one (void) row: `none` would reject it.
      await db.any(NOTIFY, [channel, payload]);
    },
    async listen(channels, handlers) {
      const listener = new PostgresListener(db, channels, handlers, logger, () => listeners.delete(listener), heard);
      listeners.add(listener);
      await listener.connect();
      return listener;
    },
    async closeAll() {
      await Promise.all([...listeners].map((l) => l.close()));
    },
  };
}

class PostgresListener implements SignalListener {
  private connection: Connection | null = null;
  private closed = false;
  private everConnected = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelay = RETRY_FIRST_MS;
  private readonly onNotification = (msg: Notification) => {
    if (this.closed) return;
    this.heard();
    try {
      this.handlers.onMessage(msg.channel, msg.payload ?? '');
    } catch (err) {
      this.logger.error('postgresql: a notification handler failed', { error: String(err) });
    }
  };

  constructor(
    private readonly db: pgPromise.IDatabase<unknown>,
    private readonly channels: readonly string[],
    private readonly handlers: SignalHandlers,
    private readonly logger: ServiceLogger,
    private readonly onClosed: () => void,
    private readonly heard: () => void,
  ) {}

  /** One connection attempt; on failure a retry is scheduled. Never rejects. */
  async connect(): Promise<void> {
    this.retryTimer = null;
    if (this.closed) return;
    let connection: Connection | null = null;
    try {
      connection = await this.db.connect({ direct: true, onLost: (err, e) => this.lost(err, e.client) });
      connection.client.on('notification', this.onNotification);
      for (const channel of this.channels) await connection.none('LISTEN $1:name', [channel]);
    } catch (err) {
      if (connection) await this.release(connection);
      this.logger.warn('postgresql: cannot listen for notifications; retrying', { error: describeConnectionError(err) });
      this.scheduleRetry();
      return;
    }
    if (this.closed) {
      await this.release(connection);
      return;
    }
    this.connection = connection;
    this.retryDelay = RETRY_FIRST_MS;
    const reconnected = this.everConnected;
    this.everConnected = true;
    this.handlers.onConnected?.(reconnected);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const connection = this.connection;
    this.connection = null;
    if (connection) await this.release(connection);
    this.onClosed();
  }

  private lost(err: unknown, client: Client): void {
    client.removeListener('notification', this.onNotification);
    this.connection = null;
    if (this.closed) return;
    this.logger.warn('postgresql: notification connection lost; reconnecting', { error: describeConnectionError(err) });
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => void this.connect(), this.retryDelay);
    // Retrying must never keep a stopping process alive.
    this.retryTimer.unref();
    this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MAX_MS);
  }

  private async release(connection: Connection): Promise<void> {
    connection.client.removeListener('notification', this.onNotification);
    try {
      await connection.done();
    } catch {
      // Already broken; nothing to release.
    }
  }
}
