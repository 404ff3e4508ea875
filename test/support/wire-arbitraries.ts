import fc from "fast-check";
import type { TransactionAction, WireEntity, WireValue } from "../../src/store/table-store.js";

/** Arbitraries of wire rows and transaction actions, for tests that check what is sent byte for byte. */

// Keys and strings from every UTF-8 width, quotes (doubled in the URL), escapes and URL-reserved characters.
export const text = (maxLength: number) =>
  fc.string({
    unit: fc.constantFrom(
      "a",
      "Z",
      "0",
      " ",
      "'",
      '"',
      "\\",
      "\n",
      "\t",
      "%",
      "&",
      "+",
      "é",
      "日",
      "😀",
      "~",
      "*",
      "(",
      "\u0001",
      "\u2028",
    ),
    maxLength,
  });
export const value: fc.Arbitrary<WireValue> = fc.oneof(
  text(40),
  text(400),
  fc.integer(),
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0),
  fc.boolean(),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.date({
    min: new Date(Date.UTC(1601, 0, 1)),
    max: new Date(Date.UTC(9999, 11, 31)),
    noInvalidDate: true,
  }),
  fc.uint8Array({ maxLength: 20 }).map((bytes) => new Uint8Array(bytes)),
  fc.record({ type: fc.constant("Guid" as const), value: fc.uuid() }),
  fc.record({ type: fc.constant("Int64" as const), value: fc.bigInt().map(String) }),
  fc.record({ type: fc.constant("Double" as const), value: fc.oneof(fc.double(), fc.integer()) }),
  fc.record({ type: fc.constant("String" as const), value: text(10) }),
);
export const properties = fc.dictionary(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/), value, {
  maxKeys: 6,
});
export const etag = fc.constantFrom("*", "W/\"datetime'2024-01-01T00%3A00%3A00.0000000Z'\"", 'W/"x"');

/**
 * One action of a transaction in `partitionKey`: rows of `rowProperties`, an update's condition from `etag`
 * (a delete's from `deleteEtags`).
 */
export function action(
  partitionKey: string,
  rowProperties: fc.Arbitrary<Record<string, WireValue>> = properties,
  deleteEtags: fc.Arbitrary<string> = etag,
): fc.Arbitrary<TransactionAction> {
  const entity = fc
    .tuple(text(12), rowProperties)
    .map(([rowKey, props]) => ({ ...props, partitionKey, rowKey }) as WireEntity);
  return fc.oneof(
    entity.map((e) => ({ kind: "insert" as const, entity: e })),
    fc.tuple(entity, fc.constantFrom("merge" as const, "replace" as const)).map(([e, mode]) => ({
      kind: "upsert" as const,
      entity: e,
      mode,
    })),
    fc
      .tuple(entity, fc.constantFrom("merge" as const, "replace" as const), etag)
      .map(([e, mode, ifMatch]) => ({
        kind: "update" as const,
        entity: e,
        mode,
        ifMatch,
      })),
    fc
      .tuple(text(12), deleteEtags)
      .map(([rowKey, ifMatch]) => ({ kind: "delete" as const, partitionKey, rowKey, ifMatch })),
  );
}
