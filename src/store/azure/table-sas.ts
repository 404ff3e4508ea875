import { isNamedKeyCredential } from "@azure/core-auth";
import { generateTableSas } from "@azure/data-tables";
import { ValidationError } from "../../errors.js";
import type { TableSasRequest } from "../table-store.js";
import type { AzureCredential } from "./azure-store-options.js";

/**
 * A SAS token for one table limited to one partition (and an optional inclusive RowKey range), signed
 * locally with the account key (`generateTableSas`; nothing is sent). A SAS or a Microsoft Entra ID
 * token credential has no key to sign with: `ValidationError`.
 */
export function signTableSas(credential: AzureCredential, table: string, request: TableSasRequest): string {
  if (!isNamedKeyCredential(credential)) {
    throw new ValidationError(
      "sas-credential",
      "AzureStore: a SAS is signed with the account key; this store was connected with a SAS or a token credential (use an account-key connection string)",
    );
  }
  const permissions = request.permissions;
  return generateTableSas(table, credential, {
    permissions: {
      query: permissions.includes("r"),
      add: permissions.includes("a"),
      update: permissions.includes("u"),
      delete: permissions.includes("d"),
    },
    expiresOn: request.expiresOn,
    ...(request.startsOn === undefined ? {} : { startsOn: request.startsOn }),
    startPartitionKey: request.partitionKey,
    endPartitionKey: request.partitionKey,
    ...(request.rowKeys === undefined
      ? {}
      : { startRowKey: request.rowKeys.start, endRowKey: request.rowKeys.end }),
  });
}
