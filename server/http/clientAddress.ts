import { isIPv6 } from 'node:net';

const IPV4_MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** Who a limit counts: an IPv4 address, or an IPv6 one's /64 (a subscriber's whole share). */
export function clientKey(address: string): string {
  const withoutZone = address.split('%')[0]!;
  const mapped = IPV4_MAPPED.exec(withoutZone);
  if (mapped) return mapped[1]!;
  if (!isIPv6(withoutZone)) return withoutZone;
  return `${ipv6Groups(withoutZone).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of a valid IPv6 address, in hexadecimal without leading zeros. */
function ipv6Groups(address: string): string[] {
  const groupsOf = (part = '') =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [group];
          // A trailing dotted IPv4 address is the last two groups.
          const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const [head, tail] = address.split('::').map(groupsOf) as [string[], string[] | undefined];
  const zeros = Array<string>(8 - head.length - (tail?.length ?? 0)).fill('0');
  return [...head, ...zeros, ...(tail ?? [])].map((group) => parseInt(group, 16).toString(16));
}
