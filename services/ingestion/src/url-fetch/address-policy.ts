import { BlockList, isIP } from 'node:net';

/** Ranges a URL fetched on a user's behalf must not reach, with the reason given when refused. */
const INTERNAL_V4: ReadonlyArray<readonly [string, number, string]> = [
  ['0.0.0.0', 8, 'an unspecified ("this network") address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a carrier-grade NAT address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address (cloud metadata lives here)'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'an IETF protocol address'],
  ['192.0.2.0', 24, 'a documentation address'],
  ['192.88.99.0', 24, 'a 6to4 relay address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
];

const INTERNAL_V6: ReadonlyArray<readonly [string, number, string]> = [
  ['::', 128, 'an unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['100::', 64, 'a discard address'],
  ['2001:db8::', 32, 'a documentation address'],
  ['fc00::', 7, 'a unique-local (private) address (cloud metadata lives here too)'],
  ['fe80::', 10, 'a link-local address'],
  ['fec0::', 10, 'a site-local address'],
  ['ff00::', 8, 'a multicast address'],
];

function blockListOf(ranges: ReadonlyArray<readonly [string, number, string]>, family: 'ipv4' | 'ipv6'): Array<{ list: BlockList; reason: string }> {
  return ranges.map(([network, prefix, reason]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return { list, reason };
  });
}

const V4 = blockListOf(INTERNAL_V4, 'ipv4');
const V6 = blockListOf(INTERNAL_V6, 'ipv6');

/**
 * Why `address` is internal (loopback, private, link-local, carrier-grade NAT, multicast,
 * unspecified, reserved, metadata), or null for a public address. IPv6 forms that carry an
 * IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are judged by that address.
 */
export function internalReason(address: string): string | null {
  const family = isIP(address);
  if (family === 4) return V4.find((r) => r.list.check(address, 'ipv4'))?.reason ?? null;
  if (family !== 6) return 'not an IP address';
  const embedded = embeddedIpv4(address);
  if (embedded !== null) return internalReason(embedded);
  return V6.find((r) => r.list.check(address, 'ipv6'))?.reason ?? null;
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), -compatible, NAT64 or 6to4 address. */
export function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (groups === null) return null;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  // ::ffff:0:0/96 (mapped) and ::/96 (compatible; :: and ::1 excepted, judged as IPv6).
  if (zeros(0, 5) && groups[5] === 0xffff) return v4(groups[6]!, groups[7]!);
  if (zeros(0, 6) && (groups[6] !== 0 || groups[7]! > 1)) return v4(groups[6]!, groups[7]!);
  // 64:ff9b::/96 (NAT64) and 2002::/16 (6to4).
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!);
  return null;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part allowed). */
function expandIpv6(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  return [...left, ...new Array<number>(missing).fill(0), ...right];
}

/**
 * Where an operator lets URL fetching reach inside anyway (TRELLIS_URL_FETCH_ALLOW): CIDRs,
 * single addresses and host names.
 */
export class FetchAllowList {
  private readonly addresses = new BlockList();
  private readonly hosts = new Set<string>();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address, prefix] = entry.split('/') as [string, string | undefined];
      const family = isIP(address);
      if (family === 0) this.hosts.add(entry.toLowerCase().replace(/\.$/, ''));
      else if (prefix === undefined) this.addresses.addAddress(address, family === 4 ? 'ipv4' : 'ipv6');
      else this.addresses.addSubnet(address, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  allowsHost(hostname: string): boolean {
    return this.hosts.has(hostname.toLowerCase().replace(/\.$/, ''));
  }

  allowsAddress(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    const embedded = family === 6 ? embeddedIpv4(address) : null;
    if (embedded !== null && this.addresses.check(embedded, 'ipv4')) return true;
    return this.addresses.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}
