import { isIPv6 } from 'node:net';

const IPV4_MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/**
 * The client a login attempt (or a write) is counted against: its IPv4 address, or the /64 its IPv6
 * address lies in, since one subscriber or one host is given a whole /64 and can use any address in
 * it. An IPv4 client of a dual-stack socket (`::ffff:a.b.c.d`) is its IPv4 address.
 */
export function clientKey(address: string): string {
  const withoutZone = address.split('%')[0]!;
  const mapped = IPV4_MAPPED.exec(withoutZone);
  if (mapped) return mapped[1]!;
  if (!isIPv6(withoutZone)) return withoutZone;
  return `${ipv6Groups(withoutZone).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of a valid IPv6 address, in hexadecimal without leading zeros. */
function ipv6Groups(address: string): string[] {
  const groupsOf = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [group];
          // A trailing dotted IPv4 address is the last two groups.
          const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const [head, tail] = address.split('::') as [string, string | undefined];
  const headGroups = groupsOf(head);
  const tailGroups = tail === undefined ? [] : groupsOf(tail);
  const zeros = Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((group) => parseInt(group, 16).toString(16));
}
