import type { CorsRule } from "./cors.js";
import {
  childrenByName,
  escapeXml,
  invalidXmlDocument,
  invalidXmlNodeValue,
  leaf,
  parseXml,
  type XmlElement,
} from "./xml-document.js";

/** How long analytics data is kept: off, or on for 1 to 365 days. */
export interface RetentionPolicy {
  readonly enabled: boolean;
  readonly days?: number | undefined;
}

/** The Logging element of the Table service properties. */
export interface LoggingSettings {
  readonly version: string;
  readonly read: boolean;
  readonly write: boolean;
  readonly delete: boolean;
  readonly retentionPolicy: RetentionPolicy;
}

/** The HourMetrics or MinuteMetrics element. */
export interface MetricsSettings {
  readonly version: string;
  readonly enabled: boolean;
  readonly includeApis?: boolean | undefined;
  readonly retentionPolicy: RetentionPolicy;
}

/** Everything Get/Set Table Service Properties carries. */
export interface ServiceProperties {
  readonly logging: LoggingSettings;
  readonly hourMetrics: MetricsSettings;
  readonly minuteMetrics: MetricsSettings;
  readonly cors: readonly CorsRule[];
}

/**
 * What an account answers before anything was set: logging off, hour metrics on with APIs and a
 * 7-day retention, minute metrics off, no CORS rules (the settings a new storage account starts with).
 */
export const DEFAULT_SERVICE_PROPERTIES: ServiceProperties = {
  logging: { version: "1.0", read: false, write: false, delete: false, retentionPolicy: { enabled: false } },
  hourMetrics: {
    version: "1.0",
    enabled: true,
    includeApis: true,
    retentionPolicy: { enabled: true, days: 7 },
  },
  minuteMetrics: { version: "1.0", enabled: false, retentionPolicy: { enabled: false } },
  cors: [],
};

// Limits of "CORS support for the Azure Storage services" and of the analytics retention policy.
const MAX_CORS_RULES = 5;
const MAX_ORIGINS = 64;
const MAX_LITERAL_HEADERS = 64;
const MAX_PREFIXED_HEADERS = 2;
const MAX_CORS_ITEM_LENGTH = 256;
/** "The maximum size of all CORS rules settings on the request, excluding XML tags, should not exceed 2 KiB." */
const MAX_CORS_TEXT = 2048;
const CORS_METHODS = new Set([
  "DELETE",
  "GET",
  "HEAD",
  "MERGE",
  "POST",
  "OPTIONS",
  "PUT",
  "PATCH",
  "TRACE",
  "CONNECT",
]);

/**
 * Reads a Set Table Service Properties body. Only the elements present are returned: the service keeps
 * its current setting for every root element the request leaves out. A body that is not a
 * `StorageServiceProperties` document, or has unknown, repeated or missing elements, is 400
 * InvalidXmlDocument (so is a sixth CORS rule, or rules whose settings total over 2 KiB); a value out
 * of range is 400 InvalidXmlNodeValue. Nothing is returned unless the whole body passes.
 */
export function parseServiceProperties(body: string): Partial<ServiceProperties> {
  const root = parseXml(body);
  if (root.name !== "StorageServiceProperties") throw invalidXmlDocument();
  const parts = childrenByName(root, ["Logging", "HourMetrics", "MinuteMetrics", "Cors"], []);
  const out: {
    logging?: LoggingSettings;
    hourMetrics?: MetricsSettings;
    minuteMetrics?: MetricsSettings;
    cors?: CorsRule[];
  } = {};
  const logging = parts.get("Logging");
  if (logging !== undefined) out.logging = parseLogging(logging);
  const hour = parts.get("HourMetrics");
  if (hour !== undefined) out.hourMetrics = parseMetrics(hour);
  const minute = parts.get("MinuteMetrics");
  if (minute !== undefined) out.minuteMetrics = parseMetrics(minute);
  const cors = parts.get("Cors");
  if (cors !== undefined) {
    if (cors.children.some((c) => c.name !== "CorsRule") || cors.children.length > MAX_CORS_RULES) {
      throw invalidXmlDocument();
    }
    const rules = cors.children.map(parseCorsRule);
    // Checked after each rule's own limits (their codes are the ones the service's SDK tests pin);
    // like the rule count, a limit on the Cors element as a whole: InvalidXmlDocument.
    if (corsTextLength(cors) > MAX_CORS_TEXT) throw invalidXmlDocument();
    out.cors = rules;
  }
  return out;
}

/** The Get Table Service Properties body, elements in the order the service writes them. */
export function renderServiceProperties(properties: ServiceProperties): string {
  const { logging, hourMetrics, minuteMetrics, cors } = properties;
  const rules = cors
    .map(
      (r) =>
        `<CorsRule><AllowedMethods>${escapeXml(r.allowedMethods)}</AllowedMethods><AllowedOrigins>${escapeXml(r.allowedOrigins)}</AllowedOrigins>` +
        `<AllowedHeaders>${escapeXml(r.allowedHeaders)}</AllowedHeaders><ExposedHeaders>${escapeXml(r.exposedHeaders)}</ExposedHeaders>` +
        `<MaxAgeInSeconds>${r.maxAgeInSeconds}</MaxAgeInSeconds></CorsRule>`,
    )
    .join("");
  return (
    '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>' +
    `<Logging><Version>${escapeXml(logging.version)}</Version><Read>${logging.read}</Read><Write>${logging.write}</Write>` +
    `<Delete>${logging.delete}</Delete>${retention(logging.retentionPolicy)}</Logging>` +
    `<HourMetrics>${metrics(hourMetrics)}</HourMetrics><MinuteMetrics>${metrics(minuteMetrics)}</MinuteMetrics>` +
    (rules === "" ? "<Cors />" : `<Cors>${rules}</Cors>`) +
    "</StorageServiceProperties>"
  );
}

function metrics(m: MetricsSettings): string {
  const apis = m.enabled ? `<IncludeAPIs>${m.includeApis ?? false}</IncludeAPIs>` : "";
  return `<Version>${escapeXml(m.version)}</Version><Enabled>${m.enabled}</Enabled>${apis}${retention(m.retentionPolicy)}`;
}

function retention(r: RetentionPolicy): string {
  const days = r.enabled && r.days !== undefined ? `<Days>${r.days}</Days>` : "";
  return `<RetentionPolicy><Enabled>${r.enabled}</Enabled>${days}</RetentionPolicy>`;
}

function parseLogging(element: XmlElement): LoggingSettings {
  const parts = childrenByName(
    element,
    ["Version", "Read", "Write", "Delete", "RetentionPolicy"],
    ["Version", "Read", "Write", "Delete", "RetentionPolicy"],
  );
  return {
    version: versionOf(parts.get("Version") as XmlElement),
    read: booleanOf(parts.get("Read") as XmlElement),
    write: booleanOf(parts.get("Write") as XmlElement),
    delete: booleanOf(parts.get("Delete") as XmlElement),
    retentionPolicy: parseRetention(parts.get("RetentionPolicy") as XmlElement),
  };
}

function parseMetrics(element: XmlElement): MetricsSettings {
  const parts = childrenByName(
    element,
    ["Version", "Enabled", "IncludeAPIs", "RetentionPolicy"],
    ["Enabled"],
  );
  const version = parts.get("Version");
  const apis = parts.get("IncludeAPIs");
  const policy = parts.get("RetentionPolicy");
  return {
    version: version === undefined ? "1.0" : versionOf(version),
    enabled: booleanOf(parts.get("Enabled") as XmlElement),
    includeApis: apis === undefined ? undefined : booleanOf(apis),
    retentionPolicy: policy === undefined ? { enabled: false } : parseRetention(policy),
  };
}

function parseRetention(element: XmlElement): RetentionPolicy {
  const parts = childrenByName(element, ["Enabled", "Days"], ["Enabled"]);
  const enabled = booleanOf(parts.get("Enabled") as XmlElement);
  const daysElement = parts.get("Days");
  if (daysElement === undefined) {
    if (enabled) throw invalidXmlNodeValue("Days");
    return { enabled };
  }
  const days = /^\s*\d{1,3}\s*$/.test(daysElement.text) ? Number(daysElement.text) : Number.NaN;
  if (!(days >= 1 && days <= 365)) throw invalidXmlNodeValue("Days");
  return enabled ? { enabled, days } : { enabled };
}

function parseCorsRule(element: XmlElement): CorsRule {
  const parts = childrenByName(
    element,
    ["AllowedOrigins", "AllowedMethods", "AllowedHeaders", "ExposedHeaders", "MaxAgeInSeconds"],
    ["AllowedOrigins", "AllowedMethods", "MaxAgeInSeconds"],
  );
  const text = (name: string) => leaf(parts.get(name)).trim();
  const origins = items(text("AllowedOrigins"));
  if (
    origins.length === 0 ||
    origins.length > MAX_ORIGINS ||
    origins.some((o) => o.length > MAX_CORS_ITEM_LENGTH)
  )
    throw invalidXmlNodeValue("AllowedOrigins");
  const methods = items(text("AllowedMethods"));
  if (methods.length === 0 || methods.some((m) => !CORS_METHODS.has(m.toUpperCase())))
    throw invalidXmlNodeValue("AllowedMethods");
  for (const name of ["AllowedHeaders", "ExposedHeaders"]) {
    const headers = items(text(name));
    const prefixed = headers.filter((h) => h.endsWith("*")).length;
    if (
      headers.length - prefixed > MAX_LITERAL_HEADERS ||
      prefixed > MAX_PREFIXED_HEADERS ||
      headers.some((h) => h.length > MAX_CORS_ITEM_LENGTH)
    )
      throw invalidXmlNodeValue(name);
  }
  const maxAgeText = text("MaxAgeInSeconds");
  const maxAge = /^\d{1,10}$/.test(maxAgeText) ? Number(maxAgeText) : Number.NaN;
  if (!(maxAge >= 0 && maxAge <= 2_147_483_647)) throw invalidXmlNodeValue("MaxAgeInSeconds");
  return {
    allowedOrigins: text("AllowedOrigins"),
    allowedMethods: text("AllowedMethods"),
    allowedHeaders: text("AllowedHeaders"),
    exposedHeaders: text("ExposedHeaders"),
    maxAgeInSeconds: maxAge,
  };
}

/** The characters of every CORS rule's settings as sent (element values, no tags). */
function corsTextLength(cors: XmlElement): number {
  let length = 0;
  for (const rule of cors.children) for (const setting of rule.children) length += setting.text.length;
  return length;
}

function booleanOf(element: XmlElement): boolean {
  // XML Schema booleans: true, false, 1, 0.
  const text = leaf(element).trim();
  if (text === "true" || text === "1") return true;
  if (text === "false" || text === "0") return false;
  throw invalidXmlNodeValue(element.name);
}

function versionOf(element: XmlElement): string {
  const text = leaf(element).trim();
  if (!/^\d{1,3}\.\d{1,3}$/.test(text)) throw invalidXmlNodeValue("Version");
  return text;
}

function items(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}
