import type { StoredRecord } from "./typed-entity.js";

/**
 * One change to the store's state. A committed request (a single write, a whole transaction, a table
 * create or delete) is a list of mutations applied together and journaled as one line.
 */
export type Mutation =
  | { readonly op: "createTable"; readonly table: string }
  | { readonly op: "deleteTable"; readonly table: string }
  | { readonly op: "put"; readonly table: string; readonly record: StoredRecord }
  | { readonly op: "delete"; readonly table: string; readonly partitionKey: string; readonly rowKey: string };
