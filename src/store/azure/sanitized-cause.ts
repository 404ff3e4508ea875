import { createHttpHeaders, createPipelineRequest, type PipelineRequest } from "@azure/core-rest-pipeline";
import { RestError } from "@azure/data-tables";

/** Removes secrets from a text (see util/redact-secrets.ts, bound to the store's own secrets). */
export type Redact = (text: string) => string;

/** Request headers that carry credentials; dropped from a kept request, whatever their value. */
const CREDENTIAL_HEADERS = new Set(["authorization", "x-ms-copy-source-authorization"]);

/**
 * The cause a tablekit error keeps of an SDK failure, with every secret scrubbed. A `RestError` hides
 * its request and response from `JSON.stringify` and `inspect`, but they stay reachable (a logger that
 * walks `cause.request` sees the SAS `sig` in the URL and the Authorization header): the copy keeps the
 * class, code, status, details and response headers, with the URL, body and messages redacted and the
 * credential headers gone. Any other error with a secret in its message is replaced by a redacted copy.
 */
export function sanitizedCause(cause: unknown, redact: Redact): unknown {
  if (!(cause instanceof Error)) return cause;
  if (cause instanceof RestError || cause.name === "RestError")
    return sanitizedRestError(cause as RestError, redact);
  const message = redact(cause.message);
  const stack = cause.stack === undefined ? undefined : redact(cause.stack);
  if (message === cause.message && stack === cause.stack) return cause;
  const copy = new Error(message);
  copy.name = cause.name;
  if (stack !== undefined) copy.stack = stack;
  return copy;
}

function sanitizedRestError(error: RestError, redact: Redact): RestError {
  const request = error.request === undefined ? undefined : sanitizedRequest(error.request, redact);
  const response =
    error.response === undefined
      ? undefined
      : {
          status: error.response.status,
          headers: createHttpHeaders(error.response.headers.toJSON()),
          ...(request === undefined
            ? { request: sanitizedRequest(error.response.request, redact) }
            : { request }),
          ...(error.response.bodyAsText == null ? {} : { bodyAsText: redact(error.response.bodyAsText) }),
        };
  const copy = new RestError(redact(error.message), {
    ...(error.code === undefined ? {} : { code: error.code }),
    ...(error.statusCode === undefined ? {} : { statusCode: error.statusCode }),
    ...(request === undefined ? {} : { request }),
    ...(response === undefined ? {} : { response }),
  });
  if (error.details !== undefined) copy.details = redactDeep(error.details, redact);
  if (error.stack !== undefined) copy.stack = redact(error.stack);
  return copy;
}

function sanitizedRequest(request: PipelineRequest, redact: Redact): PipelineRequest {
  const headers = createHttpHeaders();
  for (const [name, value] of request.headers) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) headers.set(name, redact(value));
  }
  return createPipelineRequest({
    url: redact(request.url),
    method: request.method,
    headers,
    requestId: request.requestId,
    timeout: request.timeout,
  });
}

function redactDeep(value: unknown, redact: Redact): unknown {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, redact));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDeep(item, redact)]));
}
