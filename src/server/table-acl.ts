import {
  childrenByName,
  escapeXml,
  invalidXmlDocument,
  invalidXmlNodeValue,
  leaf,
  parseXml,
} from "./xml-document.js";

/** A stored access policy: each field is optional, a SAS naming it (`si`) supplies the rest. */
export interface AccessPolicy {
  /** ISO 8601 UTC with seven fraction digits, as the service returns it. */
  readonly start?: string | undefined;
  readonly expiry?: string | undefined;
  /** Table SAS permission letters (`r`, `a`, `u`, `d`). */
  readonly permission?: string | undefined;
}

/** One entry of a table's ACL: a policy under its identifier. */
export interface SignedIdentifier {
  readonly id: string;
  readonly policy: AccessPolicy;
}

// "Set Table ACL": at most five policies per table, identifiers up to 64 characters.
const MAX_POLICIES = 5;
const MAX_ID_LENGTH = 64;
const TABLE_PERMISSIONS = "raud";

/**
 * Reads a Set Table ACL body (`<SignedIdentifiers>`); an empty body clears the ACL. More than five
 * policies, an identifier that is empty or over 64 characters, unknown permission letters or elements
 * are 400 InvalidXmlDocument; a start or expiry that is not an ISO 8601 time is 400 InvalidXmlNodeValue.
 */
export function parseTableAcl(body: string): SignedIdentifier[] {
  if (body.trim() === "") return [];
  const root = parseXml(body);
  if (root.name !== "SignedIdentifiers" || root.children.length > MAX_POLICIES) throw invalidXmlDocument();
  return root.children.map((entry) => {
    if (entry.name !== "SignedIdentifier") throw invalidXmlDocument();
    const parts = childrenByName(entry, ["Id", "AccessPolicy"], ["Id"]);
    const id = leaf(parts.get("Id"));
    if (id === "" || id.length > MAX_ID_LENGTH) throw invalidXmlDocument();
    const policyElement = parts.get("AccessPolicy");
    if (policyElement === undefined) return { id, policy: {} };
    const fields = childrenByName(policyElement, ["Start", "Expiry", "Permission"], []);
    const time = (name: string) => {
      const element = fields.get(name);
      if (element === undefined) return undefined;
      const text = leaf(element).trim();
      if (text === "") return undefined;
      const parsed = parseSasTime(text);
      if (parsed === undefined) throw invalidXmlNodeValue(name);
      return parsed.text;
    };
    const permissionText = leaf(fields.get("Permission")).trim();
    if ([...permissionText].some((letter) => !TABLE_PERMISSIONS.includes(letter))) throw invalidXmlDocument();
    return {
      id,
      policy: {
        start: time("Start"),
        expiry: time("Expiry"),
        permission: permissionText === "" ? undefined : permissionText,
      },
    };
  });
}

/** The Get Table ACL body; a policy without fields is written as its identifier alone, as the service does. */
export function renderTableAcl(identifiers: readonly SignedIdentifier[]): string {
  if (identifiers.length === 0) return '<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers />';
  const entries = identifiers.map(({ id, policy }) => {
    const fields =
      (policy.start === undefined ? "" : `<Start>${policy.start}</Start>`) +
      (policy.expiry === undefined ? "" : `<Expiry>${policy.expiry}</Expiry>`) +
      (policy.permission === undefined ? "" : `<Permission>${escapeXml(policy.permission)}</Permission>`);
    const body = fields === "" ? "" : `<AccessPolicy>${fields}</AccessPolicy>`;
    return `<SignedIdentifier><Id>${escapeXml(id)}</Id>${body}</SignedIdentifier>`;
  });
  return `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>${entries.join("")}</SignedIdentifiers>`;
}

const SAS_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * Parses a SAS or policy time in the ISO 8601 forms the service accepts (`YYYY-MM-DD`,
 * `YYYY-MM-DDThh:mmTZD`, `…:ssTZD`, `…:ss.fffffffTZD`): its instant in milliseconds and its text as the
 * service writes it back (UTC, seven fraction digits). Undefined when it is not such a time.
 */
export function parseSasTime(text: string): { ms: number; text: string } | undefined {
  const m = SAS_TIME.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h = "00", mi = "00", s = "00", fraction = "", zone = "Z"] = m as unknown as string[];
  const base = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const check = new Date(base);
  // Date.UTC rolls 2021-02-30 over into March: a rolled date is not a date.
  if (
    Number.isNaN(base) ||
    check.getUTCDate() !== Number(d) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  )
    return undefined;
  const offset =
    zone === "Z"
      ? 0
      : (zone.startsWith("-") ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
  const digits = fraction.padEnd(7, "0");
  const ms = base - offset + Math.floor(Number(digits) / 10_000);
  const utc = new Date(base - offset).toISOString().slice(0, 19);
  return { ms, text: `${utc}.${digits}Z` };
}
