/**
 * DateTime values as the service keeps them: 100-nanosecond ticks, here counted from the Unix epoch
 * (a `bigint`, because ms × 10,000 exceeds 2^53).
 */

/** Ticks per millisecond. */
export const TICKS_PER_MS = 10_000n;

/** Converts milliseconds since the Unix epoch to ticks. */
export function msToTicks(ms: number): bigint {
  return BigInt(ms) * TICKS_PER_MS;
}

/** Converts ticks to whole milliseconds since the Unix epoch (floor, also before 1970). */
export function ticksToMs(ticks: bigint): number {
  const q = ticks / TICKS_PER_MS;
  return Number(ticks < 0n && q * TICKS_PER_MS !== ticks ? q - 1n : q);
}

/** Formats ticks as the service does: ISO 8601 UTC with seven fraction digits. */
export function ticksToIso(ticks: bigint): string {
  // Rows written by one request share their Timestamp, so a page formats the same ticks many times.
  if (ticks === lastIsoTicks) return lastIso;
  const ms = ticksToMs(ticks);
  const subMs = ticks - msToTicks(ms);
  const iso = new Date(ms).toISOString(); // yyyy-mm-ddThh:mm:ss.mmmZ
  lastIsoTicks = ticks;
  lastIso = `${iso.slice(0, -1)}${subMs.toString().padStart(4, "0")}Z`;
  return lastIso;
}

let lastIsoTicks: bigint | undefined;
let lastIso = "";

const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * Parses an ISO 8601 date-time (optional seconds, up to 7 fraction digits, `Z`, an offset or none =
 * UTC) to ticks; `undefined` when malformed or not a real calendar date.
 */
export function parseIsoTicks(text: string): bigint | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCDate() !== day) return undefined; // e.g. 2023-02-30
  date.setUTCHours(hour, minute, second, 0);
  let ticks = msToTicks(date.getTime()) + BigInt((m[7] ?? "").padEnd(7, "0"));
  const zone = m[8];
  if (zone !== undefined && zone !== "Z") {
    const sign = zone.startsWith("-") ? -1n : 1n;
    const offsetMinutes = BigInt(Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
    ticks -= sign * offsetMinutes * 60_000n * TICKS_PER_MS;
  }
  return ticks;
}
