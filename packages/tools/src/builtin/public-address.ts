import { BlockList, isIP } from "node:net";

/**
 * The addresses WebFetch refuses unless told otherwise (T42): whatever is not the public
 * internet. IPv4: "this" network, private (RFC 1918), carrier-grade NAT, loopback, link-local
 * (the cloud metadata service at 169.254.169.254 is in it), IETF protocol assignments, the
 * documentation and benchmark nets, multicast, reserved and broadcast. IPv6: anything outside
 * global unicast (2000::/3: unspecified, loopback, IPv4-compatible, unique local, link-local,
 * multicast, ...), and inside it the IETF assignments (Teredo, benchmarking, ...),
 * documentation, 6to4 and IPv4-translated forms; NAT64 too. IPv4-mapped IPv6 addresses are
 * checked as the IPv4 they carry.
 */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 96],
  ["::ffff:0:0:0", 96],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 23],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["3fff::", 20],
  ["5f00::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, "ipv6");
}

/** IPv6 global unicast (2000::/3): an IPv6 address outside it is never public (fail closed). */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet("2000::", 3, "ipv6");

/**
 * Whether an IP address is on the public internet (T42). An IPv4-mapped IPv6 address
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`) is judged as its IPv4 address; anything that is not
 * an IP address is not public.
 *
 * @param address - An IPv4 or IPv6 address, without brackets.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NOT_PUBLIC.check(address, "ipv4");
  if (family !== 6) return false;
  const mapped = mappedIpv4(address);
  if (mapped !== undefined) return isPublicAddress(mapped);
  return GLOBAL_UNICAST.check(address, "ipv6") && !NOT_PUBLIC.check(address, "ipv6");
}

/** The IPv4 address an IPv4-mapped (or -compatible) IPv6 address carries, if it is one. */
function mappedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const split = lower.lastIndexOf(":");
  const head = lower.slice(0, split + 1);
  const tail = lower.slice(split + 1);
  const mappedHead = head === "::ffff:" || head === "0:0:0:0:0:ffff:";
  if (tail.includes(".")) return mappedHead || head === "::" ? tail : undefined;
  const hex = /^(?:::ffff:|0:0:0:0:0:ffff:)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex === null) return undefined;
  const high = Number.parseInt(hex[1] as string, 16);
  const low = Number.parseInt(hex[2] as string, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}
