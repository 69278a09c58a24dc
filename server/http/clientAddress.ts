import ipaddr from 'ipaddr.js';

/** Who a limit counts: an IPv4 address, or an IPv6 one's /64 (a subscriber's whole share). */
export function clientKey(address: string): string {
  const withoutZone = address.split('%')[0]!;
  if (!ipaddr.isValid(withoutZone)) return withoutZone;
  const parsed = ipaddr.process(withoutZone);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${prefix.map((part) => part.toString(16)).join(':')}::/64`;
}
