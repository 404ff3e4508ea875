/** The connection options of the data movement commands, and the endpoints they open. */
import { Option } from "commander";
import { TableEndpoint } from "../movement/endpoint.js";
import { UsageError } from "./options.js";

const ENV = "TABLEKIT_CONNECTION_STRING";

/** `--connection-string`, defaulting to the environment variable. */
export function connectionOption(): Option {
  return new Option(
    "--connection-string <cs>",
    `account-key or SAS connection string, or UseDevelopmentStorage=true (default: $${ENV})`,
  );
}

/** The endpoint of `--connection-string` (or the environment variable); a usage error without either. */
export function endpointOf(flags: { connectionString?: string | undefined }, command: string): TableEndpoint {
  const cs = flags.connectionString ?? process.env[ENV];
  if (cs === undefined || cs === "") {
    throw new UsageError(`give --connection-string or set ${ENV}`);
  }
  return connect(cs, command);
}

/** An endpoint whose retries are said on stderr from the first on (once per reason and attempt). */
export function connect(connectionString: string, command: string): TableEndpoint {
  const said = new Set<string>();
  return TableEndpoint.fromConnectionString(connectionString, {
    onRetry: (notice) => {
      const key = `${notice.reason}#${notice.attempt}`;
      if (said.has(key)) return;
      said.add(key);
      process.stderr.write(
        `tablekit ${command}: ${notice.what} to ${notice.endpoint} failed (${notice.reason}); ` +
          `retry ${notice.attempt} of ${notice.maxAttempts - 1} in ${(notice.delayMs / 1000).toFixed(1)} s\n`,
      );
    },
  });
}

/** The tables a command covers: --table, or every table with --all (exactly one of them). */
export async function tablesOf(
  flags: { table?: string; all?: boolean },
  endpoint: TableEndpoint,
): Promise<string[]> {
  if ((flags.table === undefined) === (flags.all !== true))
    throw new UsageError("give --table NAME or --all");
  return flags.all === true ? endpoint.listTables() : [flags.table!];
}
