import { fnv1a32 } from "./fnv1a.js";
import { type KeyCodec, keyValueError, type PlaceholderSite, parseDigits } from "./key-codec.js";

/** The fewest buckets `{field:hash:N}` accepts. */
export const MIN_HASH_BUCKETS = 2;

/** The most buckets `{field:hash:N}` accepts: a fan-out read costs one request per bucket and more. */
export const MAX_HASH_BUCKETS = 1024;

/**
 * Puts a field's hash bucket into a key (`{deviceId:hash:16}`): `FNV-1a-32(UTF-8 of the text) mod N`,
 * zero-padded to the width of N-1. The text is the field's key encoding without format and without
 * padding (see `hashText`). This is stored format: it never changes between versions. One-way: decoding
 * checks the bucket but yields no field value (the field is kept in its own column).
 */
export class HashCodec implements KeyCodec {
  readonly width: number;
  /** How many buckets (N). */
  readonly buckets: number;
  readonly #site: PlaceholderSite;
  readonly #text: (value: unknown) => string;

  /** `text` validates a value and returns the text that is hashed (it throws `ValidationError`). */
  constructor(site: PlaceholderSite, buckets: number, text: (value: unknown) => string) {
    this.#site = site;
    this.buckets = buckets;
    this.width = String(buckets - 1).length;
    this.#text = text;
  }

  /** The bucket number of a value. */
  bucketOf(value: unknown): number {
    return fnv1a32(this.#text(value)) % this.buckets;
  }

  /** The key text of one bucket number. */
  encodeBucket(bucket: number): string {
    if (!Number.isInteger(bucket) || bucket < 0 || bucket >= this.buckets) {
      throw keyValueError(
        this.#site,
        "key-out-of-range",
        `bucket ${bucket} is outside 0..${this.buckets - 1}`,
      );
    }
    return String(bucket).padStart(this.width, "0");
  }

  encode(value: unknown): string {
    return this.encodeBucket(this.bucketOf(value));
  }

  /** Checks the bucket text; a hash has no inverse, so the value is `null` (no field value). */
  decode(key: string, start: number, end: number): null | undefined {
    const bucket = parseDigits(key, start, end);
    return bucket >= 0 && bucket < this.buckets ? null : undefined;
  }
}
