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

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Puts a Guid into a key in lower case (the one spelling tablekit writes), after checking its shape. */
export class GuidCodec implements KeyCodec {
  readonly width = 36;
  readonly #site: PlaceholderSite;

  constructor(site: PlaceholderSite) {
    this.#site = site;
  }

  encode(value: unknown): string {
    if (typeof value !== "string" || !GUID.test(value)) {
      throw keyValueError(this.#site, "key-field-type", `must be a GUID string, got ${describeValue(value)}`);
    }
    return value.toLowerCase();
  }

  decode(key: string, start: number, end: number): string | undefined {
    const text = key.slice(start, end);
    return GUID.test(text) ? text : undefined;
  }
}
