import { AzureNamedKeyCredential, AzureSASCredential } from "@azure/data-tables";
import { ValidationError } from "../../errors.js";
import { isSettingName } from "../../util/redact-secrets.js";

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

/** The settings of a storage connection string, by their lower-case form (keys are case-insensitive). */
const SETTINGS = new Map(
  [
    "DefaultEndpointsProtocol",
    "AccountName",
    "AccountKey",
    "EndpointSuffix",
    "TableEndpoint",
    "BlobEndpoint",
    "QueueEndpoint",
    "FileEndpoint",
    "TableSecondaryEndpoint",
    "BlobSecondaryEndpoint",
    "QueueSecondaryEndpoint",
    "FileSecondaryEndpoint",
    "SharedAccessSignature",
    "UseDevelopmentStorage",
    "DevelopmentStorageProxyUri",
  ].map((name) => [name.toLowerCase(), name]),
);

/**
 * Parses an account-key or SAS connection string with the same rules as `@azure/data-tables`
 * (keys case-insensitive, `TableEndpoint` wins over `DefaultEndpointsProtocol` + `EndpointSuffix`),
 * but stricter: a missing, empty, unknown (misspelt) or repeated setting is a `ValidationError` that
 * names the setting, never its value (the SDK ignores a misspelt `AcountKey` and fails later).
 */
export function parseConnectionString(connectionString: string): ParsedConnectionString {
  if (typeof connectionString !== "string") {
    throw invalid(`expected a string, got ${connectionString === null ? "null" : typeof connectionString}`);
  }
  if (connectionString.trim() === "") throw invalid("it is empty");
  const parts = settingsOf(connectionString);

  if (parts.has("usedevelopmentstorage")) {
    if (parts.get("usedevelopmentstorage")?.toLowerCase() !== "true") {
      throw invalid("setting 'UseDevelopmentStorage' must be 'true'");
    }
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
    if (!accountName) throw invalid("missing setting 'AccountName' (AccountKey needs it)");
    // An account key is base64 (the portal's 88 characters); anything else can only fail to sign.
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(accountKey) || accountKey.length % 4 !== 0) {
      throw invalid("setting 'AccountKey' is not base64 (copy the key as the portal shows it)");
    }
    let url = tableEndpoint;
    let derivedBlob = {};
    if (!url) {
      const protocol = (parts.get("defaultendpointsprotocol") ?? "https").toLowerCase();
      const suffix = parts.get("endpointsuffix") ?? "core.windows.net";
      if (protocol !== "https" && protocol !== "http") {
        throw invalid("setting 'DefaultEndpointsProtocol' must be 'https' or 'http'");
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
    if (!tableEndpoint) throw invalid("missing setting 'TableEndpoint' (SharedAccessSignature needs it)");
    const token = sas.startsWith("?") ? sas.slice(1) : sas;
    if (!/(?:^|&)sig=[^&]/.test(token)) {
      throw invalid("setting 'SharedAccessSignature' has no 'sig' (copy the whole SAS token)");
    }
    return {
      url: tableEndpoint,
      ...blob,
      credential: new AzureSASCredential(token),
      developmentStorage: false,
    };
  }
  if (accountName) {
    throw invalid("missing setting 'AccountKey' (or TableEndpoint and SharedAccessSignature)");
  }
  throw invalid(
    "expected AccountName and AccountKey, TableEndpoint and SharedAccessSignature, or UseDevelopmentStorage=true",
  );
}

/** The `Name=value` settings by lower-case name; a part that is not one is an error naming it (if printable). */
function settingsOf(connectionString: string): Map<string, string> {
  const parts = new Map<string, string>();
  for (const element of connectionString.split(";")) {
    const trimmed = element.trim();
    if (trimmed === "") continue;
    const at = trimmed.indexOf("=");
    const name = (at < 0 ? trimmed : trimmed.slice(0, at)).trim();
    // Only a name that looks like one is printed: a part that does not may be a pasted key.
    if (!isSettingName(name)) throw invalid("a part is not a setting (not shown: it may be a secret)");
    if (at <= 0) throw invalid(`setting '${name}' has no value (expected ${name}=value)`);
    const canonical = SETTINGS.get(name.toLowerCase());
    if (canonical === undefined) {
      const suggestion = closestSetting(name);
      throw invalid(`unknown setting '${name}'${suggestion ? ` (did you mean '${suggestion}'?)` : ""}`);
    }
    const value = trimmed.slice(at + 1).trim();
    if (value === "") throw invalid(`setting '${canonical}' is empty`);
    if (parts.has(canonical.toLowerCase())) throw invalid(`setting '${canonical}' is given twice`);
    parts.set(canonical.toLowerCase(), value);
  }
  return parts;
}

/** The known setting nearest to `name` (edit distance at most a third of its length), if any. */
function closestSetting(name: string): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(name.length / 3)) + 1;
  for (const setting of SETTINGS.values()) {
    const distance = editDistance(name.toLowerCase(), setting.toLowerCase());
    if (distance < bestDistance) {
      best = setting;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length]!;
}

function stripTrailingSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}

/** Names the problem, never the string: any part of it may be a secret. */
function invalid(reason: string): ValidationError {
  return new ValidationError("connection-string", `Invalid Azure Storage connection string: ${reason}`, {
    field: "connectionString",
  });
}
