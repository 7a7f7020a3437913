/**
 * Where alert webhooks may go. A destination URL comes from a group owner,
 * and the service sends from inside the operator's network, so by default
 * a destination that resolves to loopback, private, shared, link-local
 * (cloud metadata included), multicast or reserved addresses is refused,
 * at every delivery: the check runs in the connection's own DNS lookup, so
 * the address checked is the address connected to (a name that re-resolves
 * elsewhere between a check and the connection gains nothing). The
 * operator may allow such targets (`--alert-allow-private-targets`).
 */
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** Whether an address is one a destination may not reach unless the operator allows it. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return BLOCKED.check(mapped[1]!, 'ipv4');
  return BLOCKED.check(address, 'ipv6');
}

export class RefusedTargetError extends Error {}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect`/`tls.connect` that refuses private
 * addresses unless allowed; the connection uses only the addresses it checked.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, ...(typeof options.family === 'number' && options.family > 0 ? { family: options.family } : {}) }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = allowPrivate ? [] : addresses.filter((a) => isPrivateAddress(a.address));
      if (refused.length > 0 || addresses.length === 0) {
        return callback(new RefusedTargetError(`${hostname} resolves to a private or reserved address, refused`), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** A URL's host when it is an address literal (connections to those skip the lookup), else null. */
export function literalAddress(url: URL): string | null {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) === 0 ? null : host;
}

/** Refuses a URL whose host is a private address literal (names are checked as they are resolved). */
export function checkLiteralTarget(url: URL, allowPrivate: boolean): void {
  const literal = literalAddress(url);
  if (!allowPrivate && literal !== null && isPrivateAddress(literal)) {
    throw new RefusedTargetError(`${literal} is a private or reserved address, refused`);
  }
}
