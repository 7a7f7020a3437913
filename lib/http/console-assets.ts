/**
 * The web console's files, read once from `dist/console` when the service is
 * created, and served from memory at `/console/`: the HTML `no-cache`, the
 * content-hashed bundles for a year, every answer with a strict CSP. Only
 * names read at startup exist, so no request path can reach the disk
 * (`..`, encoded or not, finds nothing).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServiceLogger } from '../core/logger.js';

/** Sent with every console answer, errors and redirects included. */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
});

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

interface Asset {
  body: Buffer;
  gzipped: Buffer | null;
  type: string;
  cacheControl: string;
}

export interface ConsoleAssets {
  /** Serves `path` (already stripped of the base path), which starts with `/console`. */
  serve(req: IncomingMessage, res: ServerResponse, path: string, basePath: string): void;
}

/** Where `npm run build` puts the console: beside the compiled `lib/`, or under `dist/` when running from sources. */
export function defaultConsoleDir(): string {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  return basename(root) === 'dist' ? join(root, 'console') : join(root, 'dist', 'console');
}

/**
 * Reads the built console; null (with a warning) when it was never built.
 * With `reload` (for `npm run dev`), the files are read again whenever the
 * build has rewritten `index.html`, which it writes last.
 */
export function loadConsoleAssets(logger: ServiceLogger, dir = defaultConsoleDir(), options: { reload?: boolean } = {}): ConsoleAssets | null {
  const index = join(dir, 'index.html');
  if (!existsSync(index)) {
    logger.warn(`the web console is enabled but not built (no ${index}); run npm run build`);
    return null;
  }
  let assets = readAssets(dir);
  let builtAt = statSync(index).mtimeMs;
  return {
    serve(req, res, path, basePath) {
      if (options.reload) {
        const now = existsSync(index) ? statSync(index).mtimeMs : builtAt;
        if (now !== builtAt) {
          builtAt = now;
          assets = readAssets(dir);
        }
      }
      serveAsset(assets, req, res, path, basePath);
    },
  };
}

function readAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    const ext = name.slice(name.lastIndexOf('.'));
    if (!statSync(file).isFile() || !(ext in TYPES)) continue;
    const body = readFileSync(file);
    const compressible = ext !== '.png' && ext !== '.woff2';
    assets.set(name, {
      body,
      gzipped: compressible ? gzipSync(body, { level: 9 }) : null,
      type: TYPES[ext]!,
      // Hashed names never change content; the HTML names the current ones.
      cacheControl: name === 'index.html' ? 'no-cache' : 'public, max-age=31536000, immutable',
    });
  }
  return assets;
}

function serveAsset(assets: Map<string, Asset>, req: IncomingMessage, res: ServerResponse, path: string, basePath: string): void {
  req.resume();
  if (path === '/console') {
    res.writeHead(308, { ...CONSOLE_SECURITY_HEADERS, Location: `${basePath}/console/`, 'Content-Length': '0' });
    res.end();
    return;
  }
  const name = path.slice('/console/'.length) || 'index.html';
  const asset = req.method === 'GET' || req.method === 'HEAD' ? assets.get(name) : undefined;
  if (!asset) {
    const body = JSON.stringify({ error: 'not_found', message: 'No such route.' });
    res.writeHead(404, {
      ...CONSOLE_SECURITY_HEADERS,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      'Cache-Control': 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  const gzip = asset.gzipped !== null && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? asset.gzipped! : asset.body;
  res.writeHead(200, {
    ...CONSOLE_SECURITY_HEADERS,
    'Content-Type': asset.type,
    'Content-Length': String(body.length),
    'Cache-Control': asset.cacheControl,
    Vary: 'Accept-Encoding',
    ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
