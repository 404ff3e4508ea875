import { TABLE_NAME } from "../../util/service-limits.js";
import { badRequest } from "./service-errors.js";

/**
 * Checks a table name against the service's rule (3-63 alphanumeric characters starting with a letter,
 * not the reserved "tables"): a name of valid characters but wrong length is 400 OutOfRangeInput, any
 * other bad name 400 InvalidResourceName.
 */
export function checkTableName(table: unknown): string {
  if (typeof table !== "string") throw badRequest("InvalidResourceName", "the table name must be a string");
  if (TABLE_NAME.test(table) && table.toLowerCase() !== "tables") return table;
  if (/^[A-Za-z][A-Za-z0-9]*$/.test(table) && table.toLowerCase() !== "tables") {
    throw badRequest("OutOfRangeInput", `table name '${table}' must be 3 to 63 characters long`);
  }
  throw badRequest(
    "InvalidResourceName",
    `table name '${table}' is invalid: use 3-63 letters and digits, starting with a letter ("tables" is reserved)`,
  );
}

/** The lookup key of a table: the service treats table names case-insensitively. */
export function tableKey(table: string): string {
  return table.toLowerCase();
}
