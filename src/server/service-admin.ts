import { type CorsHeaders, corsResponseHeaders, preflight } from "./cors.js";
import { ServiceFailureError } from "./service-error.js";
import {
  DEFAULT_SERVICE_PROPERTIES,
  parseServiceProperties,
  renderServiceProperties,
  type ServiceProperties,
} from "./service-properties.js";
import { type AccessPolicy, parseTableAcl, renderTableAcl, type SignedIdentifier } from "./table-acl.js";

/** An admin operation's answer: status, headers and body, as the table service writes it. */
export interface AdminAnswer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

const XML = "application/xml";

/**
 * The account's administrative state a Table endpoint keeps beside its tables: the service properties
 * (analytics settings and CORS rules) and each table's stored access policies. It lives as long as
 * the server; neither is written to the store's file.
 */
export class ServiceAdmin {
  #properties: ServiceProperties = DEFAULT_SERVICE_PROPERTIES;
  readonly #acls = new Map<string, readonly SignedIdentifier[]>();

  /** Get Table Service Properties: what was set, the defaults for what never was. */
  getProperties(): AdminAnswer {
    return { status: 200, headers: { "Content-Type": XML }, body: renderServiceProperties(this.#properties) };
  }

  /** Set Table Service Properties (202): each root element given replaces the stored one, the others stay. */
  setProperties(body: string): AdminAnswer {
    this.#properties = { ...this.#properties, ...parseServiceProperties(body) };
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

  /** Get Table ACL of an existing table. */
  getAcl(table: string): AdminAnswer {
    const acl = this.#acls.get(table.toLowerCase()) ?? [];
    return { status: 200, headers: { "Content-Type": XML }, body: renderTableAcl(acl) };
  }

  /** Set Table ACL of an existing table (204): the body replaces the whole list. */
  setAcl(table: string, body: string): AdminAnswer {
    const acl = parseTableAcl(body);
    if (acl.length === 0) this.#acls.delete(table.toLowerCase());
    else this.#acls.set(table.toLowerCase(), acl);
    return { status: 204, headers: {} };
  }

  /** The stored access policy `id` of a table (identifiers compare exactly, as the service does). */
  policy(table: string, id: string): AccessPolicy | undefined {
    return this.#acls.get(table.toLowerCase())?.find((entry) => entry.id === id)?.policy;
  }

  /** Forgets a table's policies: a deleted table's ACL goes with it, a re-created table starts empty. */
  forgetTable(table: string): void {
    this.#acls.delete(table.toLowerCase());
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
