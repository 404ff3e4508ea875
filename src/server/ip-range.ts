import { AUTHENTICATION_FAILED, ServiceFailureError } from "./service-error.js";

/** An inclusive IPv4 range from a SAS `sip` field, as 32-bit numbers. */
export interface IpRange {
  readonly from: number;
  readonly to: number;
}

/**
 * Parses a SAS `sip` value: one IPv4 address (`168.1.5.65`) or a range (`168.1.5.60-168.1.5.70`), the
 * forms "Create a service SAS" documents. Anything else is the service's 403 AuthenticationFailed.
 */
export function parseIpRange(text: string): IpRange {
  const [first, second, extra] = text.split("-");
  const from = ipv4(first ?? "");
  const to = second === undefined ? from : ipv4(second);
  if (extra !== undefined || from === undefined || to === undefined || from > to) {
    throw new ServiceFailureError(
      403,
      "AuthenticationFailed",
      `${AUTHENTICATION_FAILED}\nInvalid sip format`,
    );
  }
  return { from, to };
}

/** Whether the client's address lies in the range; an IPv6 client never matches an IPv4 range. */
export function ipInRange(address: string | undefined, range: IpRange): boolean {
  const ip = ipv4(normalizeIp(address) ?? "");
  return ip !== undefined && ip >= range.from && ip <= range.to;
}

/** The client address as the service reports it: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) as plain IPv4. */
export function normalizeIp(address: string | undefined): string | undefined {
  return address?.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

function ipv4(text: string): number | undefined {
  const parts = text.trim().split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}
