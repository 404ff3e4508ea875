import type { StoredRecord } from "./typed-entity.js";

/**
 * One change to the store's state. A committed request (a single write, a whole transaction, a table
 * create or delete, a setting) is a list of mutations applied together and journaled as one line.
 * Settings are opaque texts the table server keeps in the store (service properties for the account,
 * the ACL for a table), so they share the file's crash guarantees; `value` undefined removes one.
 */
export type Mutation =
  | { readonly op: "createTable"; readonly table: string }
  | { readonly op: "deleteTable"; readonly table: string }
  | { readonly op: "put"; readonly table: string; readonly record: StoredRecord }
  | { readonly op: "delete"; readonly table: string; readonly partitionKey: string; readonly rowKey: string }
  | { readonly op: "accountSetting"; readonly name: string; readonly value: string | undefined }
  | {
      readonly op: "tableSetting";
      readonly table: string;
      readonly name: string;
      readonly value: string | undefined;
    };
