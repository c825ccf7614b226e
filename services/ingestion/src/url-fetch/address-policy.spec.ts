import { describe, expect, it } from 'vitest';
import { FetchAllowList, embeddedIpv4, internalReason } from './address-policy';

describe('internalReason', () => {
  it('refuses every internal IPv4 range, with its reason', () => {
    const internal: Record<string, RegExp> = {
      '127.0.0.1': /loopback/,
      '127.255.0.9': /loopback/,
      '10.1.2.3': /private/,
      '172.16.0.1': /private/,
      '172.31.255.255': /private/,
      '192.168.1.1': /private/,
      '169.254.169.254': /link-local.*metadata/,
      '100.64.0.1': /carrier-grade NAT/,
      '100.100.100.200': /carrier-grade NAT/,
      '0.0.0.0': /unspecified/,
      '224.0.0.1': /multicast/,
      '239.255.255.250': /multicast/,
      '255.255.255.255': /reserved/,
      '198.18.0.1': /benchmarking/,
    };
    for (const [address, reason] of Object.entries(internal)) expect(internalReason(address), address).toMatch(reason);
  });

  it('refuses internal IPv6, and IPv4 carried inside IPv6', () => {
    for (const address of ['::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '64:ff9b::10.0.0.1', '2002:c0a8:0101::1', '::127.0.0.1']) {
      expect(internalReason(address), address).not.toBeNull();
    }
    expect(embeddedIpv4('::ffff:7f00:1')).toBe('127.0.0.1');
  });

  it('lets public addresses through', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:0808:0808::1']) {
      expect(internalReason(address), address).toBeNull();
    }
  });
});

describe('FetchAllowList', () => {
  it('allows listed CIDRs, addresses (also IPv4-mapped) and host names, and nothing else', () => {
    const allow = new FetchAllowList(['10.0.0.0/8', '127.0.0.1', 'fd00::/8', 'wiki.intranet']);
    expect(allow.allowsAddress('10.9.9.9')).toBe(true);
    expect(allow.allowsAddress('::ffff:10.9.9.9')).toBe(true);
    expect(allow.allowsAddress('127.0.0.1')).toBe(true);
    expect(allow.allowsAddress('127.0.0.2')).toBe(false);
    expect(allow.allowsAddress('fd12::1')).toBe(true);
    expect(allow.allowsAddress('192.168.0.1')).toBe(false);
    expect(allow.allowsHost('WIKI.intranet.')).toBe(true);
    expect(allow.allowsHost('other.intranet')).toBe(false);
  });
});
