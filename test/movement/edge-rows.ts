/** Lines of the export format with every Edm type and its edges, for round-trip tests. */

/** Every printable ASCII character a key may hold (not / \ # ?), and non-ASCII and astral text. */
export const KEY_CHARACTERS = `${[...Array(95)]
  .map((_, i) => String.fromCharCode(32 + i))
  .filter((c) => !"/\\#?".includes(c))
  .join("")}é中😀`;

/** One entity per edge, as lines of the format (no Timestamp). */
export function edgeLines(): string[] {
  const typed = (name: string, type: string, value: unknown) =>
    `"${name}@odata.type":"Edm.${type}","${name}":${JSON.stringify(value)}`;
  const lines = [
    `{"PartitionKey":"edges","RowKey":"int",${typed("min", "Int32", -2147483648)},${typed("max", "Int32", 2147483647)},${typed("zero", "Int32", 0)}}`,
    `{"PartitionKey":"edges","RowKey":"int64",${typed("min", "Int64", "-9223372036854775808")},${typed("max", "Int64", "9223372036854775807")},${typed("small", "Int64", "5")}}`,
    `{"PartitionKey":"edges","RowKey":"double",${typed("whole", "Double", 1)},${typed("big", "Double", 1e21)},${typed("tiny", "Double", 5e-324)},${typed("frac", "Double", 0.1)},${typed("neg", "Double", -2.5)},${typed("nan", "Double", "NaN")},${typed("inf", "Double", "Infinity")},${typed("ninf", "Double", "-Infinity")},${typed("maxd", "Double", 1.7976931348623157e308)}}`,
    `{"PartitionKey":"edges","RowKey":"date",${typed("ticks", "DateTime", "2024-02-29T23:59:59.1234567Z")},${typed("first", "DateTime", "1601-01-01T00:00:00.0000000Z")},${typed("last", "DateTime", "9999-12-31T23:59:59.9999999Z")}}`,
    `{"PartitionKey":"edges","RowKey":"guid",${typed("g", "Guid", "c9da6455-213d-42c9-9a79-3e9149a57833")},${typed("zero", "Guid", "00000000-0000-0000-0000-000000000000")}}`,
    `{"PartitionKey":"edges","RowKey":"binary",${typed("empty", "Binary", "")},${typed("bytes", "Binary", "AAEC/w==")},${typed("b2", "Binary", "/+7d")}}`,
    `{"PartitionKey":"edges","RowKey":"bool",${typed("yes", "Boolean", true)},${typed("no", "Boolean", false)}}`,
    `{"PartitionKey":"edges","RowKey":"string","empty":"","astral":"😀𝄞 and é","quotes":"\\"'\\\\","control":"a\\u0001b\\nc\\td","digits":"007","json":"{\\"a\\":1}"}`,
    `{"PartitionKey":${JSON.stringify(KEY_CHARACTERS)},"RowKey":${JSON.stringify(KEY_CHARACTERS)},"note":"every key character"}`,
    `{"PartitionKey":"","RowKey":"","note":"empty keys"}`,
  ];
  return lines;
}

/** The negative zero line: imported, it is stored as 0 on every store (src/util/stored-double.ts). */
export const NEGATIVE_ZERO_LINE = `{"PartitionKey":"edges","RowKey":"negzero","nz@odata.type":"Edm.Double","nz":-0.0}`;
