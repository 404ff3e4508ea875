import { SEE_CHALLENGE, ServiceFailureError } from "./service-error.js";

/**
 * The version from which the storage services answer an unauthenticated request (or a refused bearer
 * token) with a bearer challenge; before it, a request without credentials is told the resource does
 * not exist.
 */
export const BEARER_CHALLENGE_VERSION = "2019-12-12";

/** The storage front end's `WWW-Authenticate` challenge: where to get a token, and for which resource. */
export const BEARER_CHALLENGE =
  "Bearer authorization_uri=https://login.microsoftonline.com/common/oauth2/authorize resource_id=https://storage.azure.com";

/**
 * The answer to a request with neither an `Authorization` header nor a shared access signature: the
 * Table service allows no anonymous access. For `x-ms-version` 2019-12-12 and later that is 401
 * NoAuthenticationInformation with a `WWW-Authenticate` bearer challenge; for older versions (the SDKs
 * send 2019-02-02) it is 404 ResourceNotFound, as the storage front end answers anonymous requests to
 * resources that are not public.
 */
export function anonymousRequestFailure(version: string): ServiceFailureError {
  if (version >= BEARER_CHALLENGE_VERSION) {
    return new ServiceFailureError(401, "NoAuthenticationInformation", SEE_CHALLENGE, {
      "WWW-Authenticate": BEARER_CHALLENGE,
    });
  }
  return new ServiceFailureError(404, "ResourceNotFound", "The specified resource does not exist.");
}
