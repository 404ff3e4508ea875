import { ServiceLimits } from "../util/service-limits.js";
import {
  describeValue,
  type KeyCodec,
  keyValueError,
  type PlaceholderSite,
  parseBigDigits,
  parseDigits,
} from "./key-codec.js";

/** Digits of the largest Int32 (2147483647): the width of `{n}` on an Int32 field. */
export const INT32_DIGITS = 10;

/** Digits of the largest Int64 (9223372036854775807): the width of `{n}` on an Int64 field. */
export const INT64_DIGITS = 19;

// Keys compare as text, so a number sorts numerically only as fixed-width digits, and a minus sign
// would sort negatives wrongly: keys hold non-negative integers only (PATTERNS.md, "pad numbers").
const NEGATIVE_REASON =
  "is negative; keys hold only non-negative integers, since '-' does not sort numerically";

/** Puts an Int32 (a JS number) into a key as zero-padded digits, optionally descending (`max - n`). */
export class Int32Codec implements KeyCodec {
  readonly width: number;
  readonly #site: PlaceholderSite;
  readonly #desc: boolean;
  readonly #max: number;

  constructor(site: PlaceholderSite, width: number, desc: boolean) {
    this.#site = site;
    this.width = width;
    this.#desc = desc;
    this.#max = 10 ** width - 1;
  }

  encode(value: unknown): string {
    if (typeof value !== "number" || !Number.isInteger(value)) {
      throw keyValueError(
        this.#site,
        "key-field-type",
        `must be an integer number, got ${describeValue(value)}`,
      );
    }
    if (value < 0) throw keyValueError(this.#site, "key-negative", `${NEGATIVE_REASON} (got ${value})`);
    if (value > ServiceLimits.maxInt32) {
      throw keyValueError(this.#site, "key-out-of-range", `is ${value}, above the Int32 maximum`);
    }
    if (value > this.#max) {
      throw keyValueError(this.#site, "key-too-wide", `is ${value}, which does not fit ${this.width} digits`);
    }
    return String(this.#desc ? this.#max - value : value).padStart(this.width, "0");
  }

  decode(key: string, start: number, end: number): number | undefined {
    const digits = parseDigits(key, start, end);
    if (digits < 0) return undefined;
    const n = this.#desc ? this.#max - digits : digits;
    return n > ServiceLimits.maxInt32 ? undefined : n;
  }
}

/** Puts an Int64 (a bigint, or a safe-integer number) into a key as zero-padded digits, optionally descending. */
export class Int64Codec implements KeyCodec {
  readonly width: number;
  readonly #site: PlaceholderSite;
  readonly #desc: boolean;
  readonly #max: bigint;

  constructor(site: PlaceholderSite, width: number, desc: boolean) {
    this.#site = site;
    this.width = width;
    this.#desc = desc;
    this.#max = 10n ** BigInt(width) - 1n;
  }

  encode(value: unknown): string {
    let n: bigint;
    if (typeof value === "bigint") n = value;
    else if (typeof value === "number" && Number.isSafeInteger(value)) n = BigInt(value);
    else {
      throw keyValueError(
        this.#site,
        "key-field-type",
        `must be a bigint or a safe-integer number, got ${describeValue(value)}`,
      );
    }
    if (n < 0n) throw keyValueError(this.#site, "key-negative", `${NEGATIVE_REASON} (got ${n})`);
    if (n > ServiceLimits.maxInt64) {
      throw keyValueError(this.#site, "key-out-of-range", `is ${n}, above the Int64 maximum`);
    }
    if (n > this.#max) {
      throw keyValueError(this.#site, "key-too-wide", `is ${n}, which does not fit ${this.width} digits`);
    }
    return (this.#desc ? this.#max - n : n).toString().padStart(this.width, "0");
  }

  decode(key: string, start: number, end: number): bigint | undefined {
    const digits = parseBigDigits(key, start, end);
    if (digits < 0n) return undefined;
    const n = this.#desc ? this.#max - digits : digits;
    return n > ServiceLimits.maxInt64 ? undefined : n;
  }
}
