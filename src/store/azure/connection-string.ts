import { AzureNamedKeyCredential, AzureSASCredential } from "@azure/data-tables";
import { ValidationError } from "../../errors.js";
import { redactSecrets } from "./redact-secrets.js";

/** What a storage connection string names: the table endpoint and how to authenticate. */
export interface ParsedConnectionString {
  url: string;
  credential: AzureNamedKeyCredential | AzureSASCredential;
  /**
   * The Blob endpoint (for large entity values): `BlobEndpoint`, else derived like the table endpoint
   * from `AccountName` + `EndpointSuffix` when no `TableEndpoint` is given; absent otherwise.
   */
  blobUrl?: string | undefined;
  /** The string was `UseDevelopmentStorage=true` (the local emulator). */
  developmentStorage: boolean;
}

// The emulator's well-known account, as `@azure/data-tables` uses for UseDevelopmentStorage=true.
const DEV_ACCOUNT = "devstoreaccount1";
const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const DEV_ENDPOINT = "http://127.0.0.1:10002/devstoreaccount1";
const DEV_BLOB_ENDPOINT = "http://127.0.0.1:10000/devstoreaccount1";

/**
 * Parses an account-key or SAS connection string with the same rules as `@azure/data-tables`
 * (keys case-insensitive, `TableEndpoint` wins over `DefaultEndpointsProtocol` + `EndpointSuffix`).
 */
export function parseConnectionString(connectionString: string): ParsedConnectionString {
  const parts = new Map<string, string>();
  for (const element of connectionString.split(";")) {
    const trimmed = element.trim();
    const at = trimmed.indexOf("=");
    if (at > 0) parts.set(trimmed.slice(0, at).toLowerCase(), trimmed.slice(at + 1));
  }

  if (parts.get("usedevelopmentstorage")?.toLowerCase() === "true") {
    return {
      url: DEV_ENDPOINT,
      blobUrl: DEV_BLOB_ENDPOINT,
      credential: new AzureNamedKeyCredential(DEV_ACCOUNT, DEV_KEY),
      developmentStorage: true,
    };
  }

  const tableEndpoint = stripTrailingSlash(parts.get("tableendpoint") ?? "");
  const blobEndpoint = stripTrailingSlash(parts.get("blobendpoint") ?? "");
  const blob = blobEndpoint ? { blobUrl: blobEndpoint } : {};
  const accountName = parts.get("accountname") ?? "";
  const accountKey = parts.get("accountkey") ?? "";
  const sas = parts.get("sharedaccesssignature") ?? "";

  if (accountKey) {
    if (!accountName) throw invalid("AccountKey is given but AccountName is missing", connectionString);
    let url = tableEndpoint;
    let derivedBlob = {};
    if (!url) {
      const protocol = (parts.get("defaultendpointsprotocol") ?? "https").toLowerCase();
      const suffix = parts.get("endpointsuffix") ?? "core.windows.net";
      if (protocol !== "https" && protocol !== "http") {
        throw invalid("DefaultEndpointsProtocol must be 'https' or 'http'", connectionString);
      }
      url = `${protocol}://${accountName}.table.${suffix}`;
      derivedBlob = { blobUrl: `${protocol}://${accountName}.blob.${suffix}` };
    }
    return {
      url,
      ...derivedBlob,
      ...blob,
      credential: new AzureNamedKeyCredential(accountName, accountKey),
      developmentStorage: false,
    };
  }
  if (sas) {
    if (!tableEndpoint) throw invalid("SharedAccessSignature needs a TableEndpoint", connectionString);
    const token = sas.startsWith("?") ? sas.slice(1) : sas;
    return {
      url: tableEndpoint,
      ...blob,
      credential: new AzureSASCredential(token),
      developmentStorage: false,
    };
  }
  throw invalid(
    "expected AccountName and AccountKey, TableEndpoint and SharedAccessSignature, or UseDevelopmentStorage=true",
    connectionString,
  );
}

function stripTrailingSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}

function invalid(reason: string, connectionString: string): ValidationError {
  return new ValidationError(
    "connection-string",
    `Invalid Azure Storage connection string (${reason}): ${redactSecrets(connectionString)}`,
  );
}
