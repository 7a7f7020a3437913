/**
 * A real `node:http` server on 127.0.0.1 that answers the ingestion client
 * the way a hostile or misdirected server would: huge bodies, inflated
 * counts, a body that trickles. It records, per request, how many answer
 * bytes it managed to write and whether the client closed the connection
 * before the answer was complete.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './client-support.js';

export interface HostileExchange {
  /** Entries in the request body (a JSON array). */
  entries: number;
  /** Answer bytes handed to the socket. */
  written: number;
  /** The connection closed before the whole answer was written. */
  closedEarly: boolean;
  /** Resolves once the exchange is over (answer finished or connection closed). */
  over: Promise<void>;
}

export interface HostileServer {
  url: string;
  exchanges: HostileExchange[];
  close(): Promise<void>;
}

/** How the server answers one request: it writes through `write`, which counts the bytes. */
export type HostileScript = (n: number, res: ServerResponse, exchange: HostileExchange, req: IncomingMessage) => void;

export async function startHostileServer(script: HostileScript): Promise<HostileServer> {
  const exchanges: HostileExchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let entries = 0;
      try {
        entries = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown[]).length;
      } catch {
        entries = -1;
      }
      let finish!: () => void;
      const exchange: HostileExchange = { entries, written: 0, closedEarly: false, over: new Promise((resolve) => (finish = resolve)) };
      res.on('finish', finish);
      res.on('close', () => {
        if (!res.writableFinished) exchange.closedEarly = true;
        finish();
      });
      const n = exchanges.push(exchange) - 1;
      script(n, res, exchange, req);
    });
  });
  const listening = await listenOnLoopback(server);
  return { url: listening.url, exchanges, close: listening.close };
}

/** A JSON answer of `status`. */
export function answerJson(res: ServerResponse, exchange: HostileExchange, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  exchange.written += Buffer.byteLength(text);
  res.writeHead(status, { 'content-type': 'application/json' }).end(text);
}

/**
 * `totalBytes` of answer in 64 KiB chunks, waiting for the socket to drain
 * between them (so what was written is what the client let through), with
 * or without a Content-Length. Stops when the client closes the connection.
 */
export function answerHuge(res: ServerResponse, exchange: HostileExchange, status: number, totalBytes: number, declareLength: boolean): void {
  res.writeHead(status, { 'content-type': 'application/json', ...(declareLength ? { 'content-length': String(totalBytes) } : {}) });
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const pump = () => {
    while (!res.destroyed && exchange.written < totalBytes) {
      const piece = chunk.subarray(0, Math.min(chunk.length, totalBytes - exchange.written));
      exchange.written += piece.length;
      if (!res.write(piece)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end();
  };
  pump();
}

/** A 202 whose body `text` arrives one byte every `everyMs`; stops when the client closes the connection. */
export function answerTrickle(res: ServerResponse, exchange: HostileExchange, text: string, everyMs: number): void {
  res.writeHead(202, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.flushHeaders();
  let at = 0;
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    res.write(text[at]!);
    exchange.written++;
    if (++at === text.length) {
      clearInterval(timer);
      res.end();
    }
  }, everyMs);
  res.on('close', () => clearInterval(timer));
}
