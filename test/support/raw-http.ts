/**
 * A raw TCP client for tests that need what fetch hides: a request sent in
 * pieces or never finished, a connection kept idle, a reader that stops
 * reading, and exactly when the server closes the connection.
 */
import { connect, type Socket } from 'node:net';

export interface RawConnection {
  socket: Socket;
  /** Every byte received so far, as latin1 text. */
  received(): string;
  /** Bytes received so far. */
  receivedBytes(): number;
  /** True once the server ended or reset the connection. */
  readonly closed: boolean;
  /** Resolves once the connection is closed; rejects after `timeoutMs`. */
  waitClosed(timeoutMs: number): Promise<void>;
  /** Resolves once `predicate(received())` holds; rejects on close or after `timeoutMs`. */
  waitFor(predicate: (text: string) => boolean, timeoutMs: number, what: string): Promise<void>;
  write(text: string): void;
  destroy(): void;
}

/** Connects to the server behind `baseUrl` (`http://127.0.0.1:port`). */
export async function rawConnect(baseUrl: string): Promise<RawConnection> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const chunks: Buffer[] = [];
  let bytes = 0;
  let closed = false;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    bytes += chunk.length;
    wake();
  });
  // A reset is a close too, for these tests.
  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed = true;
    wake();
  });
  const received = () => Buffer.concat(chunks).toString('latin1');
  const waitUntil = (done: () => boolean, failOnClose: boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (done()) finish(resolve);
        else if (failOnClose && closed) finish(() => reject(new Error(`connection closed before ${what}; received: ${received().slice(0, 300)}`)));
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`timed out waiting for ${what}; received: ${received().slice(0, 300)}`))), timeoutMs);
      const finish = (then: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        then();
      };
      waiters.add(check);
      check();
    });
  return {
    socket,
    received,
    receivedBytes: () => bytes,
    get closed() {
      return closed;
    },
    waitClosed: (timeoutMs) => waitUntil(() => closed, false, timeoutMs, 'the server to close the connection'),
    waitFor: (predicate, timeoutMs, what) => waitUntil(() => predicate(received()), true, timeoutMs, what),
    write: (text) => {
      socket.write(text);
    },
    destroy: () => socket.destroy(),
  };
}

/** A GET request's head, `Connection: keep-alive` unless told otherwise. */
export function getRequest(path: string, headers: Record<string, string> = {}): string {
  const lines = [`GET ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries({ Connection: 'keep-alive', ...headers }).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join('\r\n')}\r\n\r\n`;
}
