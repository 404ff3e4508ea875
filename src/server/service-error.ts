import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  StoreError,
  TableKitError,
  TransactionError,
} from "../errors.js";

/** The service's message of a 403 AuthenticationFailed (a detail line follows it). */
export const AUTHENTICATION_FAILED =
  "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.";

/** The service's message of a 401 whose reason is in the `WWW-Authenticate` challenge (from 2019-12-12). */
export const SEE_CHALLENGE =
  "Server failed to authenticate the request. Please refer to the information in the www-authenticate header.";

/** A failure as the service reports it: HTTP status, `x-ms-error-code` and message text. */
export interface ServiceFailure {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  /** Headers the answer carries besides the error code (e.g. `WWW-Authenticate` on a 401). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** A failure with a status and code chosen by the server itself (auth, routing, limits). */
export class ServiceFailureError extends Error {
  readonly failure: ServiceFailure;
  constructor(status: number, code: string, message: string, headers?: Readonly<Record<string, string>>) {
    super(message);
    this.failure = headers === undefined ? { status, code, message } : { status, code, message, headers };
  }
}

/** The service's 400 answer with this error code (InvalidInput, InvalidUri, OutOfRangeInput, …). */
export function badRequest(code: string, message: string): ServiceFailureError {
  return new ServiceFailureError(400, code, message);
}

// The service's own texts for its common codes (Table service error codes reference).
const TEXTS: Record<string, string> = {
  EntityAlreadyExists: "The specified entity already exists.",
  ResourceNotFound: "The specified resource does not exist.",
  UpdateConditionNotSatisfied: "The update condition specified in the request was not satisfied.",
  TableNotFound: "The table specified does not exist.",
  TableAlreadyExists: "The table specified already exists.",
  TableBeingDeleted: "The specified table is being deleted.",
};

/** Translates anything a handler threw into the service's answer; unknown errors are 500 InternalError. */
export function toFailure(error: unknown): ServiceFailure {
  if (error instanceof ServiceFailureError) return error.failure;
  if (error instanceof EntityAlreadyExistsError) return known(409, "EntityAlreadyExists");
  if (error instanceof EntityNotFoundError) return known(404, "ResourceNotFound");
  if (error instanceof ConcurrencyError) return known(412, "UpdateConditionNotSatisfied");
  if (error instanceof TransactionError) {
    const code = error.serviceCode ?? "InvalidInput";
    return {
      status: error.statusCode ?? 400,
      code,
      message: `${error.index}:${TEXTS[code] ?? error.message}`,
    };
  }
  if (error instanceof StoreError) {
    const code = error.serviceCode ?? "InternalError";
    const text = error.message.startsWith(`${code}: `) ? error.message.slice(code.length + 2) : error.message;
    return { status: error.statusCode ?? 500, code, message: TEXTS[code] ?? text };
  }
  if (error instanceof TableKitError) return { status: 400, code: "InvalidInput", message: error.message };
  return { status: 500, code: "InternalError", message: "The server encountered an internal error." };
}

function known(status: number, code: string): ServiceFailure {
  return { status, code, message: TEXTS[code] as string };
}

/** The JSON error body the service sends: `{"odata.error":{"code","message":{"lang","value"}}}`. */
export function errorBody(failure: ServiceFailure, requestId: string, date: Date): string {
  const value = messageText(failure, requestId, date);
  return JSON.stringify({ "odata.error": { code: failure.code, message: { lang: "en-US", value } } });
}

/** The message with the request id and time lines the service appends. */
export function messageText(failure: ServiceFailure, requestId: string, date: Date): string {
  return `${failure.message}\nRequestId:${requestId}\nTime:${date.toISOString()}`;
}
