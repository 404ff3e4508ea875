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

/**
 * The service's 409 TableBeingDeleted answer to creating a table whose name a deletion still holds
 * ("Table service error codes": TableBeingDeleted, Conflict (409), "The specified table is being deleted.").
 */
export function tableBeingDeleted(): StoreError {
  return new StoreError("TableBeingDeleted: The specified table is being deleted.", {
    statusCode: 409,
    serviceCode: "TableBeingDeleted",
  });
}
