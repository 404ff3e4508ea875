import { createHmac, timingSafeEqual } from "node:crypto";
import { type IpRange, ipInRange, normalizeIp, parseIpRange } from "./ip-range.js";
import { AUTHENTICATION_FAILED, ServiceFailureError } from "./service-error.js";
import { type AccountCredentials, secretKey } from "./shared-key.js";
import { type AccessPolicy, parseSasTime } from "./table-acl.js";

/** What a shared access signature allows: its permission letters, its table (table SAS) and key range. */
export interface SasGrant {
  readonly kind: "table" | "account";
  readonly permissions: string;
  /** The table a table SAS is for (lower case); undefined for an account SAS. */
  readonly table?: string;
  /** Account SAS resource types: `s` service, `c` container (tables), `o` object (entities). */
  readonly resourceTypes?: string;
  readonly startPartitionKey?: string;
  readonly startRowKey?: string;
  readonly endPartitionKey?: string;
  readonly endRowKey?: string;
}

/** The operation a request performs, in the terms SAS permissions are granted in. */
export type SasOperation =
  | { kind: "tables"; verb: "list" | "create" | "delete" }
  | {
      kind: "entity";
      table: string;
      verb: "read" | "add" | "update" | "upsert" | "delete";
      partitionKey?: string;
      rowKey?: string;
    }
  | { kind: "service"; verb: "read" | "write" }
  | { kind: "acl"; table: string; verb: "read" | "write" };

/** What a SAS check needs from the request and the server besides the token itself. */
export interface SasContext {
  /** Now, in epoch milliseconds. */
  readonly now: number;
  /** Whether the request came over HTTPS (a token with `spr=https` is refused over HTTP). */
  readonly https: boolean;
  /** The client's address as the socket reports it (`sip` is checked against it). */
  readonly clientAddress: string | undefined;
  /** The stored access policy `id` of a table (`si`), if the table has one by that identifier. */
  policy(table: string, id: string): AccessPolicy | undefined;
}

// The fields a SAS may give empty only by leaving them out ("… is optional but cannot be empty").
const NON_EMPTY = ["st", "se", "sp", "si", "sip", "spr"];

// The fields of a table or account SAS; none may appear twice.
const SAS_FIELDS = [
  "sv",
  "ss",
  "srt",
  "sp",
  "st",
  "se",
  "sip",
  "spr",
  "si",
  "tn",
  "spk",
  "srk",
  "epk",
  "erk",
  "sig",
];

/**
 * Checks a SAS token in the query string ("Create a service SAS" for tables, "Create an account SAS"):
 * the signature over the documented string-to-sign, then the stored access policy a table SAS names
 * (`si`: its start, expiry and permissions complete the token's, and a field given by both is refused),
 * the time window, the client address (`sip`) and the protocol (`spr`). Returns what it grants;
 * `authorize` checks each operation against it.
 */
export function checkSas(account: AccountCredentials, query: URLSearchParams, context: SasContext): SasGrant {
  const token = readToken(query);
  const { toSign, grant } =
    query.get("tn") !== null ? signedTableSas(account, token) : signedAccountSas(account, token);
  checkSignature(account, toSign, token.sig);
  const terms = completeFromPolicy(token, grant, context);
  checkTimeWindow(terms, context.now);
  checkSource(token, context);
  return { ...grant, permissions: terms.permissions };
}

/** The token's fields a check reads again after its well-formedness is settled. */
interface SasToken {
  readonly query: URLSearchParams;
  readonly sig: string;
  readonly version: string;
  readonly protocol: string;
  readonly ipRange: IpRange | undefined;
  readonly start: string;
  readonly expiry: string;
}

/** The string a SAS signs and what the token grants once its signature matches. */
interface SignedSas {
  readonly toSign: string;
  readonly grant: SasGrant;
}

/** Start, expiry and permissions from the token, completed by a stored access policy. */
interface SasTerms {
  readonly start: string | undefined;
  readonly expiry: string;
  readonly permissions: string;
}

/** A field of the token; an absent one reads as empty, as it is signed. */
function field(query: URLSearchParams, name: string): string {
  return query.get(name) ?? "";
}

/** Refuses a token that is not well formed, before its signature is checked. */
function readToken(query: URLSearchParams): SasToken {
  // A SAS field given twice has no single signed value (`sig=a&sig=b` must not pass on the first one).
  for (const name of SAS_FIELDS) {
    if (query.getAll(name).length > 1) throw refused("AuthenticationFailed", `the SAS repeats '${name}'`);
  }
  const sig = query.get("sig");
  const version = field(query, "sv");
  if (sig === null || version === "") throw refused("AuthenticationFailed", "the SAS lacks sig or sv");
  for (const name of NON_EMPTY) {
    if (query.has(name) && field(query, name).trim() === "")
      throw refused("AuthenticationFailed", `${name} is optional but cannot be empty`);
  }
  const protocol = field(query, "spr");
  if (protocol !== "" && protocol !== "https" && protocol !== "https,http" && protocol !== "http,https") {
    throw refused("AuthenticationFailed", "spr must be https or https,http");
  }
  const ipRange = query.has("sip") ? parseIpRange(field(query, "sip")) : undefined;
  return { query, sig, version, protocol, ipRange, start: field(query, "st"), expiry: field(query, "se") };
}

/** A table SAS (`tn` given): its string-to-sign and the table and key range it grants. */
function signedTableSas(account: AccountCredentials, token: SasToken): SignedSas {
  const { query } = token;
  const table = field(query, "tn").toLowerCase();
  const toSign = [
    field(query, "sp"),
    token.start,
    token.expiry,
    `/table/${account.name}/${table}`,
    field(query, "si"),
    field(query, "sip"),
    token.protocol,
    token.version,
    field(query, "spk"),
    field(query, "srk"),
    field(query, "epk"),
    field(query, "erk"),
  ].join("\n");
  const grant: SasGrant = {
    kind: "table",
    permissions: field(query, "sp"),
    table,
    ...optional("startPartitionKey", query.get("spk")),
    ...optional("startRowKey", query.get("srk")),
    ...optional("endPartitionKey", query.get("epk")),
    ...optional("endRowKey", query.get("erk")),
  };
  return { toSign, grant };
}

/** An account SAS (no `tn`): its string-to-sign and the resource types it grants. */
function signedAccountSas(account: AccountCredentials, token: SasToken): SignedSas {
  const { query } = token;
  // A table SAS must name its table ("tn: Required"); without it the token can only be an account
  // SAS, and those cannot name a stored access policy.
  if (query.has("si"))
    throw refused(
      "AuthenticationFailed",
      "a table SAS must name its table (tn); an account SAS cannot name a stored access policy (si)",
    );
  if (!field(query, "ss").includes("t"))
    throw refused("AuthorizationServiceMismatch", "the account SAS does not cover the table service");
  const toSign = [
    account.name,
    field(query, "sp"),
    field(query, "ss"),
    field(query, "srt"),
    token.start,
    token.expiry,
    field(query, "sip"),
    token.protocol,
    token.version,
    "",
  ].join("\n");
  return {
    toSign,
    grant: { kind: "account", permissions: field(query, "sp"), resourceTypes: field(query, "srt") },
  };
}

/** Compares the signature with the account key's HMAC of `toSign`, in constant time. */
function checkSignature(account: AccountCredentials, toSign: string, sig: string): void {
  const expected = createHmac("sha256", secretKey(account)).update(toSign, "utf8").digest();
  const given = Buffer.from(sig, "base64");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw refused("AuthenticationFailed", "the SAS signature does not match");
  }
}

/**
 * The token's start, expiry and permissions, completed by the stored access policy a table SAS names
 * (a field given by both is refused); expiry and permissions must come from one or the other.
 */
function completeFromPolicy(token: SasToken, grant: SasGrant, context: SasContext): SasTerms {
  const { query } = token;
  let start: string | undefined = token.start === "" ? undefined : token.start;
  let expiry: string | undefined = token.expiry === "" ? undefined : token.expiry;
  let permissions: string | undefined = query.has("sp") ? field(query, "sp") : undefined;
  const id = query.get("si");
  if (id !== null && grant.kind === "table") {
    const policy = context.policy(grant.table as string, id);
    if (policy === undefined)
      throw refused("AuthenticationFailed", "SAS identifier cannot be found for specified signed identifier");
    if (
      (start !== undefined && policy.start !== undefined) ||
      (expiry !== undefined && policy.expiry !== undefined) ||
      (permissions !== undefined && policy.permission !== undefined)
    ) {
      throw refused(
        "AuthenticationFailed",
        "Access policy fields can be associated with signature or SAS identifier but not both",
      );
    }
    start ??= policy.start;
    expiry ??= policy.expiry;
    permissions ??= policy.permission;
  }
  if (expiry === undefined)
    throw refused("AuthenticationFailed", "Signed expiry must be specified in signature or SAS identifier");
  if (permissions === undefined)
    throw refused(
      "AuthenticationFailed",
      "Signed permission must be specified in signature or SAS identifier",
    );
  return { start, expiry, permissions };
}

/** Refuses malformed or inverted times, and a request outside the window [start, expiry). */
function checkTimeWindow(terms: SasTerms, now: number): void {
  const startMs = terms.start === undefined ? undefined : parseSasTime(terms.start)?.ms;
  const expiryMs = parseSasTime(terms.expiry)?.ms;
  if (expiryMs === undefined || (terms.start !== undefined && startMs === undefined)) {
    throw refused("AuthenticationFailed", "Signature fields not well formed.");
  }
  if (startMs !== undefined && startMs >= expiryMs)
    throw refused("AuthenticationFailed", "Signed expiry time has to be after signed start time");
  // The window is [start, expiry): valid from the start instant, no longer at the expiry instant.
  if ((startMs !== undefined && now < startMs) || now >= expiryMs)
    throw refused("AuthenticationFailed", "Signature not valid in the specified time frame");
}

/** Refuses a client outside the token's address range (`sip`), or plain HTTP for `spr=https`. */
function checkSource(token: SasToken, context: SasContext): void {
  if (token.ipRange !== undefined && !ipInRange(context.clientAddress, token.ipRange)) {
    throw new ServiceFailureError(
      403,
      "AuthorizationSourceIPMismatch",
      `This request is not authorized to perform this operation using this source IP ${normalizeIp(context.clientAddress) ?? ""}.`,
    );
  }
  if (token.protocol === "https" && !context.https) {
    throw new ServiceFailureError(
      403,
      "AuthorizationProtocolMismatch",
      "This request is not authorized to perform this operation using this protocol.",
    );
  }
}

/** Refuses an operation the grant does not cover (403, the service's codes). */
export function authorize(grant: SasGrant, operation: SasOperation): void {
  const has = (letters: string) => [...letters].some((l) => grant.permissions.includes(l));
  if (operation.kind === "service" || operation.kind === "acl") {
    // Service properties and stats are the service resource type (s); a table's ACL, like the table
    // itself, the container type (c). Only an account SAS reaches either: a table SAS is for entities.
    if (grant.kind !== "account") throw mismatch("AuthorizationFailure");
    if (!grant.resourceTypes?.includes(operation.kind === "service" ? "s" : "c"))
      throw mismatch("AuthorizationResourceTypeMismatch");
    if (!has(operation.verb === "read" ? "r" : "w")) throw mismatch("AuthorizationPermissionMismatch");
    return;
  }
  if (operation.kind === "tables") {
    if (grant.kind !== "account" || !grant.resourceTypes?.includes("c"))
      throw mismatch("AuthorizationResourceTypeMismatch");
    const needed = operation.verb === "list" ? "l" : operation.verb === "create" ? "ac" : "d";
    if (!has(needed)) throw mismatch("AuthorizationPermissionMismatch");
    return;
  }
  if (grant.kind === "account") {
    if (!grant.resourceTypes?.includes("o")) throw mismatch("AuthorizationResourceTypeMismatch");
  } else if (operation.table.toLowerCase() !== grant.table) {
    throw mismatch("AuthorizationFailure");
  }
  // Table SAS letters: r query, a add, u update, d delete; an upsert needs both add and update.
  const needed = { read: ["r"], add: ["a"], update: ["u"], upsert: ["a", "u"], delete: ["d"] }[
    operation.verb
  ];
  if (!needed.every((l) => grant.permissions.includes(l))) throw mismatch("AuthorizationPermissionMismatch");
  if (
    operation.partitionKey !== undefined &&
    operation.rowKey !== undefined &&
    !inRange(grant, operation.partitionKey, operation.rowKey)
  ) {
    throw mismatch("AuthorizationFailure");
  }
}

/** Whether a key lies in the grant's range: from (spk, srk) to (epk, erk), both ends inclusive. */
export function inRange(grant: SasGrant, partitionKey: string, rowKey: string): boolean {
  const { startPartitionKey: spk, startRowKey: srk, endPartitionKey: epk, endRowKey: erk } = grant;
  if (
    spk !== undefined &&
    (partitionKey < spk || (partitionKey === spk && srk !== undefined && rowKey < srk))
  )
    return false;
  if (
    epk !== undefined &&
    (partitionKey > epk || (partitionKey === epk && erk !== undefined && rowKey > erk))
  )
    return false;
  return true;
}

/** The grant's key range as an OData filter, ANDed to a query's own so it returns nothing outside. */
export function rangeFilter(grant: SasGrant): string | undefined {
  const q = (s: string) => `'${s.replaceAll("'", "''")}'`;
  const parts: string[] = [];
  const { startPartitionKey: spk, startRowKey: srk, endPartitionKey: epk, endRowKey: erk } = grant;
  if (spk !== undefined) {
    parts.push(
      srk === undefined
        ? `PartitionKey ge ${q(spk)}`
        : `(PartitionKey gt ${q(spk)} or (PartitionKey eq ${q(spk)} and RowKey ge ${q(srk)}))`,
    );
  }
  if (epk !== undefined) {
    parts.push(
      erk === undefined
        ? `PartitionKey le ${q(epk)}`
        : `(PartitionKey lt ${q(epk)} or (PartitionKey eq ${q(epk)} and RowKey le ${q(erk)}))`,
    );
  }
  return parts.length === 0 ? undefined : parts.join(" and ");
}

function optional<K extends string>(key: K, value: string | null): Partial<Record<K, string>> {
  return value === null || value === "" ? {} : ({ [key]: value } as Record<K, string>);
}

function refused(code: string, detail: string): ServiceFailureError {
  return new ServiceFailureError(403, code, `${AUTHENTICATION_FAILED}\n${detail}`);
}

function mismatch(code: string): ServiceFailureError {
  return new ServiceFailureError(403, code, "This request is not authorized to perform this operation.");
}
