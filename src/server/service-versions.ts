import { ServiceFailureError } from "./service-error.js";

/**
 * The storage service versions Azure knows, newest first: the versions of "Versioning for the Azure
 * Storage services" and "Previous Azure Storage service versions" (learn.microsoft.com/rest/api/
 * storageservices), as Azurite lists them for its table service (`ValidAPIVersions` in
 * src/table/utils/constants.ts of Azure/Azurite at 9074bea3, 2026-06-06 its newest). A version newer
 * than this list is refused like an unknown one; `skipApiVersionCheck` accepts it.
 */
export const SERVICE_VERSIONS: readonly string[] = [
  "2026-06-06",
  "2026-04-06",
  "2026-02-06",
  "2025-11-05",
  "2025-07-05",
  "2025-05-05",
  "2025-01-05",
  "2024-11-04",
  "2024-08-04",
  "2024-05-04",
  "2024-02-04",
  "2023-11-03",
  "2023-08-03",
  "2023-01-03",
  "2022-11-02",
  "2021-12-02",
  "2021-10-04",
  "2021-08-06",
  "2021-06-08",
  "2021-04-10",
  "2021-02-12",
  "2020-12-06",
  "2020-10-02",
  "2020-08-04",
  "2020-06-12",
  "2020-04-08",
  "2020-02-10",
  "2019-12-12",
  "2019-10-10",
  "2019-07-07",
  "2019-02-02",
  "2018-11-09",
  "2018-03-28",
  "2017-11-09",
  "2017-07-29",
  "2017-04-17",
  "2016-05-31",
  "2015-12-11",
  "2015-07-08",
  "2015-04-05",
  "2015-02-21",
  "2014-02-14",
  "2013-08-15",
  "2012-02-12",
  "2011-08-18",
  "2009-09-19",
  "2009-07-17",
  "2009-04-14",
];

const KNOWN = new Set(SERVICE_VERSIONS);
const VERSION_FORMAT = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Whether the service takes a request's `x-ms-version` (absent is fine: the server picks its default).
 * With `skipApiVersionCheck` any version of the form YYYY-MM-DD is taken, as Azurite's
 * `--skipApiVersionCheck` does (for an SDK newer than this list); a value that is no version is not.
 */
export function isAcceptedServiceVersion(version: string | undefined, skipApiVersionCheck: boolean): boolean {
  return version === undefined || (skipApiVersionCheck ? VERSION_FORMAT.test(version) : KNOWN.has(version));
}

/**
 * Azure's answer to a version it does not know, or a value that is no version at all: 400
 * `InvalidHeaderValue` "The value for one of the HTTP headers is not in the correct format." (what the
 * storage front end answered SDKs that sent a version newer than the service: azure-sdk-for-net #45302,
 * azure-storage-python #631).
 */
export function unknownServiceVersion(): ServiceFailureError {
  return new ServiceFailureError(
    400,
    "InvalidHeaderValue",
    "The value for one of the HTTP headers is not in the correct format.",
  );
}
