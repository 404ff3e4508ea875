import { type FieldTypeLookup, type KeyFieldType, KeyTemplate } from "../../src/keys/key-template.js";

/** Field types used across the key tests; Double/Boolean/Binary/Json columns cannot be in keys. */
const TYPES: Record<string, KeyFieldType | "unsupported"> = {
  department: "String",
  email: "String",
  lastName: "String",
  employeeId: "Int32",
  id: "Guid",
  s: "String",
  t: "String",
  n: "Int32",
  m: "Int32",
  big: "Int64",
  a: "Int32",
  b: "Int64",
  at: "DateTime",
  when: "DateTime",
  score: "unsupported",
  active: "unsupported",
};

/** Looks a field up in the shared test schema. */
export const fieldType: FieldTypeLookup = (field) => TYPES[field];

/** Parses a template against the shared test schema. */
export function template(source: string, what = "Employee.rowKey"): KeyTemplate {
  return KeyTemplate.parse(source, fieldType, what);
}

/** Service DateTime range (1601-01-01 .. 9999-12-31T23:59:59.999Z). */
export const MIN_DATE = new Date(Date.UTC(1601, 0, 1));
export const MAX_DATE = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
