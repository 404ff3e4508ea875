import { createHmac } from "node:crypto";

/** The emulator account's well-known credentials (public; what every emulator accepts). */
export const ACCOUNT = "devstoreaccount1";
export const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** How a raw request is signed: SharedKey, SharedKeyLite, or not at all. */
export type Scheme = "SharedKey" | "SharedKeyLite" | "none";

/**
 * A raw HTTP request to the server, signed as the REST docs describe ("Authorize with Shared Key",
 * Table service formats), written here from the documentation rather than shared with the server.
 */
export async function signedFetch(
  url: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    scheme?: Scheme;
    key?: string;
  } = {},
): Promise<Response> {
  const method = init.method ?? "GET";
  const headers = signedHeaders(url, { ...init, hasBody: init.body !== undefined });
  return fetch(url, { method, headers, ...(init.body === undefined ? {} : { body: init.body }) });
}

/** The headers of a signed raw request (for requests sent otherwise than by `fetch`, e.g. streamed). */
export function signedHeaders(
  url: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    hasBody?: boolean;
    scheme?: Scheme;
    key?: string;
  } = {},
): Record<string, string> {
  const method = init.method ?? "GET";
  const headers: Record<string, string> = {
    "x-ms-date": new Date().toUTCString(),
    "x-ms-version": "2019-02-02",
    DataServiceVersion: "3.0",
    Accept: "application/json;odata=minimalmetadata",
    ...init.headers,
  };
  if (init.hasBody === true && headers["Content-Type"] === undefined)
    headers["Content-Type"] = "application/json";
  const scheme = init.scheme ?? "SharedKeyLite";
  if (scheme !== "none") {
    const u = new URL(url);
    const comp = u.searchParams.get("comp");
    const resource = `/${ACCOUNT}${u.pathname}${comp ? `?comp=${comp}` : ""}`;
    const date = headers["x-ms-date"] as string;
    const toSign =
      scheme === "SharedKey"
        ? `${method}\n${headers["Content-MD5"] ?? ""}\n${headers["Content-Type"] ?? ""}\n${date}\n${resource}`
        : `${date}\n${resource}`;
    const sig = createHmac("sha256", Buffer.from(init.key ?? KEY, "base64"))
      .update(toSign, "utf8")
      .digest("base64");
    headers.Authorization = `${scheme} ${ACCOUNT}:${sig}`;
  }
  return headers;
}

/** The error code of an error answer's body: its `odata.error`, or its XML `<Error><Code>`. */
export async function errorOf(
  response: Response,
): Promise<{ status: number; code: string | null; body: string; bodyCode: unknown }> {
  const body = await response.text();
  let bodyCode: unknown;
  try {
    bodyCode = (JSON.parse(body) as { "odata.error"?: { code?: unknown } })["odata.error"]?.code;
  } catch {
    bodyCode = /^<\?xml[^>]*\?><Error><Code>([^<]*)<\/Code><Message>/.exec(body)?.[1];
  }
  return { status: response.status, code: response.headers.get("x-ms-error-code"), body, bodyCode };
}
