import { describeValue, type KeyCodec, keyValueError, type PlaceholderSite } from "./key-codec.js";

/** Puts a String or Guid value into a key as its own text: variable width, sorts by the text. */
export class StringCodec implements KeyCodec {
  readonly width = undefined;
  readonly #site: PlaceholderSite;

  constructor(site: PlaceholderSite) {
    this.#site = site;
  }

  encode(value: unknown): string {
    if (typeof value !== "string") {
      throw keyValueError(this.#site, "key-field-type", `must be a string, got ${describeValue(value)}`);
    }
    return value;
  }

  decode(key: string, start: number, end: number): string {
    return key.slice(start, end);
  }
}
