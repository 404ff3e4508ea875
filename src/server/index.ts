/**
 * `tablekit/server`: the table server alone (`tablekit serve` in code), for programs that start an
 * emulator without the client.
 */
export type { TableServerOAuth } from "./bearer-token.js";
export {
  startTableServer,
  type TableServer,
  type TableServerOptions,
  type TableServerTls,
} from "./table-server.js";
