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
/**
 * Values of every wire form. `sdkSerialisable`: only those the SDK's serialiser writes as the service
 * reads them (it writes NaN and ±Infinity as null); else the non-finite Doubles too.
 */
export function wireValue({ sdkSerialisable = false } = {}): fc.Arbitrary<WireValue> {
  const double = fc.double(sdkSerialisable ? { noNaN: true, noDefaultInfinity: true } : {});
  return fc.oneof(
    text(40),
    text(400),
    fc.integer(),
    double,
    ...(sdkSerialisable
      ? [fc.constant(-0)]
      : [fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0)]),
    fc.boolean(),
    fc.constant(null),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    fc.date({
      min: new Date(Date.UTC(1601, 0, 1)),
      max: new Date(Date.UTC(9999, 11, 31)),
      noInvalidDate: true,
    }),
    fc.uint8Array({ maxLength: 20 }).map((bytes) => new Uint8Array(bytes)),
    fc.record({ type: fc.constant("Guid" as const), value: fc.uuid() }),
    fc.record({ type: fc.constant("Int64" as const), value: fc.bigInt().map(String) }),
    fc.record({ type: fc.constant("Double" as const), value: fc.oneof(double, fc.integer()) }),
    fc.record({ type: fc.constant("String" as const), value: text(10) }),
    fc.record({ type: fc.constant("Boolean" as const), value: fc.boolean() }),
  );
}

/**
 * Rows' properties (up to 6) of `values`. `etag` and `timestamp` are the port's metadata, never sent
 * (the SDK would send them as system properties): `withMetadataNames: false` leaves them out.
 */
export function wireProperties(
  values: fc.Arbitrary<WireValue> = wireValue(),
  { withMetadataNames = true } = {},
): fc.Arbitrary<Record<string, WireValue>> {
  const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/);
  return fc.dictionary(
    withMetadataNames ? name : name.filter((n) => n !== "etag" && n !== "timestamp"),
    values,
    { maxKeys: 6 },
  );
}

export const etag = fc.constantFrom("*", "W/\"datetime'2024-01-01T00%3A00%3A00.0000000Z'\"", 'W/"x"');

/**
 * One action of a transaction in `partitionKey`: rows of `rowProperties`, an update's condition from `etag`
 * (a delete's from `deleteEtags`).
 */
export function action(
  partitionKey: string,
  rowProperties: fc.Arbitrary<Record<string, WireValue>> = wireProperties(),
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

/** A transaction: a PartitionKey and 1 to 6 actions in it (`actionOf`, `action` by default). */
export function transaction(
  actionOf: (partitionKey: string) => fc.Arbitrary<TransactionAction> = action,
): fc.Arbitrary<[string, TransactionAction[]]> {
  return text(12).chain((partitionKey) =>
    fc.tuple(fc.constant(partitionKey), fc.array(actionOf(partitionKey), { minLength: 1, maxLength: 6 })),
  );
}
