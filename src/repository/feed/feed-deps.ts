import type { WireEntity } from "../../store/table-store.js";
import type { Backend, Clock, Requests, TableNaming } from "../core/requests.js";
import type { FeedDirectory } from "../pipeline/feed/feed-directory.js";
import type { Sleep } from "../pipeline/retry-policy.js";

/** What a change feed reads with: requests, the context's clock and sleep, the directory, and how to open sealed copies. */
export interface FeedDeps {
  runner: Requests & TableNaming & Clock & Backend;
  directory: FeedDirectory;
  /** The copied row with its encrypted values opened under its own keys (as the entity's row). */
  open: (table: string, row: WireEntity) => Promise<WireEntity>;
  sleep: Sleep;
}
