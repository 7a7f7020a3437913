/**
 * The caller's address (D12): the socket address, or with trusted proxy hops
 * N > 0 the N-th address from the right of X-Forwarded-For (the socket
 * address when the header holds fewer).
 */
import type { IncomingMessage } from 'node:http';

export function clientIp(req: IncomingMessage, trustedHops: number): string {
  const socketAddress = req.socket.remoteAddress ?? 'unknown';
  if (trustedHops <= 0) return socketAddress;
  const header = req.headers['x-forwarded-for'];
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (!raw) return socketAddress;
  const hops = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (hops.length < trustedHops) return socketAddress;
  return hops[hops.length - trustedHops] ?? socketAddress;
}
