import { describe, expect, test } from "vitest";
import {
  canonicalDateTime,
  checkRow,
  formatLine,
  RowError,
  rowFromJson,
} from "../../src/movement/typed-row.js";
import { markDoubles } from "../../src/util/double-marks.js";
import { edgeLines, NEGATIVE_ZERO_LINE } from "./edge-rows.js";

// The line format on its own: parse and format are inverse, the service's JSON is typed exactly.
describe("typed NDJSON lines", () => {
  test("every edge line formats back to itself", () => {
    for (const line of edgeLines()) {
      const row = rowFromJson(JSON.parse(line));
      checkRow(row);
      expect(formatLine(row)).toBe(line);
    }
  });

  test("a negative zero Double is read as 0, as every store keeps it", () => {
    const row = rowFromJson(JSON.parse(NEGATIVE_ZERO_LINE));
    expect(Object.is(row.properties[0]?.value, 0)).toBe(true);
    expect(formatLine(row)).toBe(NEGATIVE_ZERO_LINE.replace('"nz":-0.0', '"nz":0'));
  });

  test("the service's unannotated JSON: 1.0 is a Double, 1 an Int32, text stays text", () => {
    const text =
      '{"value":[{"PartitionKey":"p","RowKey":"r","d":1.0,"e":2E3,"i":1,"s":"1.0 [x]","n":-0.0,"q":"a\\"2.5","b":"\\\\","f":3.0}]}';
    const [entity] = (JSON.parse(markDoubles(text)) as { value: unknown[] }).value;
    const row = rowFromJson(entity, true);
    expect(row.properties.map((p) => [p.name, p.type, p.value])).toEqual([
      ["d", "Double", 1],
      ["e", "Double", 2000],
      ["i", "Int32", 1],
      ["s", "String", "1.0 [x]"],
      ["n", "Double", 0],
      ["q", "String", 'a"2.5'],
      ["b", "String", "\\"],
      ["f", "Double", 3],
    ]);
  });

  test("DateTime text is canonical: seven digits, UTC", () => {
    expect(canonicalDateTime("2024-01-02T03:04:05Z", "d")).toBe("2024-01-02T03:04:05.0000000Z");
    expect(canonicalDateTime("2024-01-02T03:04:05.12Z", "d")).toBe("2024-01-02T03:04:05.1200000Z");
    expect(canonicalDateTime("2024-01-02T03:04:05.1234567+02:00", "d")).toBe("2024-01-02T01:04:05.1234567Z");
    expect(() => canonicalDateTime("2024-01-02", "d")).toThrow(RowError);
  });

  test("bad lines name what is wrong", () => {
    const reasons = [
      ['{"RowKey":"r"}', "PartitionKey"],
      ['{"PartitionKey":"p","RowKey":"r","n@odata.type":"Edm.Int64","n":"1.5"}', "Edm.Int64"],
      ['{"PartitionKey":"p","RowKey":"r","n@odata.type":"Edm.Int64","n":"9223372036854775808"}', "Edm.Int64"],
      ['{"PartitionKey":"p","RowKey":"r","n@odata.type":"Edm.Int32","n":2147483648}', "Edm.Int32"],
      ['{"PartitionKey":"p","RowKey":"r","g@odata.type":"Edm.Guid","g":"nope"}', "Edm.Guid"],
      ['{"PartitionKey":"p","RowKey":"r","b@odata.type":"Edm.Binary","b":"abc"}', "Edm.Binary"],
      ['{"PartitionKey":"p","RowKey":"r","x@odata.type":"Edm.Decimal","x":"1"}', "Edm type"],
      ['{"PartitionKey":"p","RowKey":"r","x":null}', "no Table service value"],
      ["[1]", "JSON object"],
    ] as const;
    for (const [line, reason] of reasons) {
      expect(() => rowFromJson(JSON.parse(line)), line).toThrow(reason);
    }
    const checks = [
      ['{"PartitionKey":"a#b","RowKey":"r"}', "forbidden character"],
      [`{"PartitionKey":"p","RowKey":"${"k".repeat(513)}"}`, "bytes"],
      ['{"PartitionKey":"p","RowKey":"r","bad-name":"x"}', "not a valid property name"],
      [`{"PartitionKey":"p","RowKey":"r","s":"${"x".repeat(32_769)}"}`, "characters"],
    ] as const;
    for (const [line, reason] of checks) {
      expect(() => checkRow(rowFromJson(JSON.parse(line))), line.slice(0, 60)).toThrow(reason);
    }
  });
});
