/**
 * The caller's address: the socket address, or with trusted proxy hops
 * N > 0 the N-th address from the right of X-Forwarded-For (the socket
 * address when the header holds fewer). And the key its IP rate-limit bucket
 * goes under.
 */
import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';

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

/**
 * The IP bucket key of an address. One IPv6 subscriber usually holds a
 * whole /64 and can pick any address in it, so IPv6 callers share a bucket
 * per /64 (`2001:db8:0:1::/64`); an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.1`, how a dual-stack socket reports IPv4) is the IPv4
 * address. Anything that is not an address is its own key.
 */
export function addressBucketKey(address: string): string {
  if (isIPv4(address)) return address;
  const bare = address.split('%')[0]!; // a zone index (fe80::1%eth0) names no other host
  if (!isIPv6(bare)) return address;
  const groups = ipv6Groups(bare);
  if (groups === null) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/**
 * The eight 16-bit groups of an IPv6 address. The WHATWG URL parser does
 * the parsing (and rewrites an embedded dotted IPv4 tail as two groups);
 * only its `::` shorthand is expanded here.
 */
function ipv6Groups(address: string): number[] | null {
  let host: string;
  try {
    host = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const [head, tail] = host.split('::') as [string, string | undefined];
  const part = (text: string | undefined) => (text ? text.split(':').map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  const groups = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}
