import type { ServedStore } from "../store/served-store.js";
import { type CorsHeaders, corsResponseHeaders, preflight } from "./cors.js";
import { ServiceFailureError } from "./service-error.js";
import {
  DEFAULT_SERVICE_PROPERTIES,
  parseServiceProperties,
  renderServiceProperties,
  type ServiceProperties,
} from "./service-properties.js";
import { type AccessPolicy, parseTableAcl, renderTableAcl } from "./table-acl.js";

/** An admin operation's answer: status, headers and body, as the table service writes it. */
export interface AdminAnswer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

const XML = "application/xml";
// Names of the settings kept in the store. Each is kept as the body Get answers and re-read with
// Set's parser, so what a restart restores passes the same checks as what a request may set.
const PROPERTIES = "service-properties";
const ACL = "acl";
const MAX_CACHED_ACLS = 1000;

/**
 * The account's administrative state a Table endpoint keeps beside its tables: the service properties
 * (analytics settings and CORS rules) and each table's stored access policies. Both live in the store
 * as settings, so `--file` journals them like writes (one line each, written before the answer) and a
 * table's ACL goes with the table in the same line that deletes it.
 */
export class ServiceAdmin {
  readonly #records: ServedStore;
  /** The last parsed properties and the stored text they came from (parsed once per change). */
  #cache: { text: string | undefined; properties: ServiceProperties } = {
    text: undefined,
    properties: DEFAULT_SERVICE_PROPERTIES,
  };

  /** Parsed ACLs by table name as requests give it, with the stored text each came from. */
  readonly #acls = new Map<string, { text: string; acl: ReturnType<typeof parseTableAcl> }>();

  constructor(records: ServedStore) {
    this.#records = records;
  }

  /** The stored properties, the defaults before any set; reparsed only when the stored text changed. */
  get #properties(): ServiceProperties {
    const text = this.#records.accountSetting(PROPERTIES);
    if (text !== this.#cache.text) {
      const properties =
        text === undefined
          ? DEFAULT_SERVICE_PROPERTIES
          : { ...DEFAULT_SERVICE_PROPERTIES, ...parseServiceProperties(text) };
      this.#cache = { text, properties };
    }
    return this.#cache.properties;
  }

  /** Get Table Service Properties: what was set, the defaults for what never was. */
  getProperties(): AdminAnswer {
    return { status: 200, headers: { "Content-Type": XML }, body: renderServiceProperties(this.#properties) };
  }

  /**
   * Set Table Service Properties (202): each root element given replaces the stored one, the others
   * stay. The body is checked whole before anything is stored: a bad one changes nothing.
   */
  setProperties(body: string): AdminAnswer {
    const properties = { ...this.#properties, ...parseServiceProperties(body) };
    this.#records.setAccountSetting(PROPERTIES, renderServiceProperties(properties));
    return { status: 202, headers: {} };
  }

  /**
   * Get Table Service Stats. The service answers it only on the secondary endpoint
   * (`account-secondary`), where replication is always live here; on the primary it is 400.
   */
  getStats(secondary: boolean, now: Date): AdminAnswer {
    if (!secondary) {
      throw new ServiceFailureError(
        400,
        "InvalidQueryParameterValue",
        "Value for one of the query parameters specified in the request URI is invalid.\nQueryParameterName:comp\nQueryParameterValue:stats",
      );
    }
    const body =
      '<?xml version="1.0" encoding="utf-8"?><StorageServiceStats><GeoReplication><Status>live</Status>' +
      `<LastSyncTime>${now.toUTCString()}</LastSyncTime></GeoReplication></StorageServiceStats>`;
    return { status: 200, headers: { "Content-Type": XML }, body };
  }

  /** Get Table ACL of an existing table (stored as the body this answers). */
  getAcl(table: string): AdminAnswer {
    const body = this.#records.tableSetting(table, ACL) ?? renderTableAcl([]);
    return { status: 200, headers: { "Content-Type": XML }, body };
  }

  /** Set Table ACL of an existing table (204): the body replaces the whole list; an empty one clears it. */
  setAcl(table: string, body: string): AdminAnswer {
    const acl = parseTableAcl(body);
    this.#records.setTableSetting(table, ACL, acl.length === 0 ? undefined : renderTableAcl(acl));
    return { status: 204, headers: {} };
  }

  /**
   * The stored access policy `id` of a table (identifiers compare exactly, as the service does). Every
   * request with a SAS naming a policy asks, so each table's list is parsed once per stored text.
   */
  policy(table: string, id: string): AccessPolicy | undefined {
    const text = this.#records.tableSetting(table, ACL);
    if (text === undefined) return undefined;
    let cached = this.#acls.get(table);
    if (cached?.text !== text) {
      if (this.#acls.size >= MAX_CACHED_ACLS) this.#acls.clear();
      cached = { text, acl: parseTableAcl(text) };
      this.#acls.set(table, cached);
    }
    return cached.acl.find((entry) => entry.id === id)?.policy;
  }

  /** Answers a CORS preflight from the stored rules (no authorization, as the service evaluates it). */
  preflight(
    origin: string | undefined,
    method: string | undefined,
    headers: string | undefined,
  ): AdminAnswer {
    return {
      status: 200,
      headers: { ...preflight(this.#properties.cors, origin, method, headers), "Content-Length": "0" },
    };
  }

  /** The CORS headers an answer gets from the stored rules; none (and no work) while there are no rules. */
  corsHeaders(method: string, origin: string | undefined, headerNames: () => string[]): CorsHeaders {
    const rules = this.#properties.cors;
    return rules.length === 0 ? {} : corsResponseHeaders(rules, method, origin, headerNames());
  }
}
