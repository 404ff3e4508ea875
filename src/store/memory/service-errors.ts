import { StoreError } from "../../errors.js";

/** The service's 400 answer: `code` is the Table service error code (InvalidInput, OutOfRangeInput, …). */
export function badRequest(code: string, message: string, cause?: unknown): StoreError {
  return new StoreError(`${code}: ${message}`, { statusCode: 400, serviceCode: code, cause });
}

/** The service's 404 TableNotFound answer. */
export function tableNotFound(table: string): StoreError {
  return new StoreError(`TableNotFound: the table '${table}' does not exist`, {
    statusCode: 404,
    serviceCode: "TableNotFound",
  });
}
