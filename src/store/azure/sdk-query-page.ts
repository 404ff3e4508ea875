import type { TableClient } from "@azure/data-tables";
import type { StoredEntity, StorePage, StoreQuery } from "../table-store.js";
import type { AzureCalls } from "./azure-calls.js";
import { fromSdkContinuationToken, toSdkContinuationToken } from "./continuation-token.js";
import { fromSdkQueryEntity } from "./sdk-entity.js";

/** One query page through the SDK, with minimal metadata (type annotations). */
export async function querySdkPage(
  client: TableClient,
  calls: AzureCalls,
  table: string,
  query: StoreQuery,
): Promise<StorePage> {
  const select =
    query.select !== undefined && query.select.length > 0 ? (query.select as string[]) : undefined;
  const page = await calls.runWhole({ operation: "queryPage", table }, async (abortSignal) => {
    const pages = client
      .listEntities({
        abortSignal,
        queryOptions: {
          ...(query.filter === undefined ? {} : { filter: query.filter }),
          ...(select === undefined ? {} : { select }),
        },
      })
      .byPage({
        ...(query.top === undefined ? {} : { maxPageSize: query.top }),
        ...(query.continuation ? { continuationToken: toSdkContinuationToken(query.continuation) } : {}),
      });
    return (await pages.next()).value;
  });
  if (page === undefined) return { items: [] };
  // A fresh array: the SDK's page also carries a `continuationToken` property.
  const items: StoredEntity[] = new Array(page.length);
  for (let i = 0; i < page.length; i++) items[i] = fromSdkQueryEntity(page[i] as Record<string, unknown>);
  const continuation = fromSdkContinuationToken(page.continuationToken);
  return continuation === undefined ? { items } : { items, continuation };
}
