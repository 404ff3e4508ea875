/**
 * A loopback HTTP proxy that records every request it forwards, as the wire shows it: the HTTP method,
 * the store call it is (`classifyRequest`), the table (or blob container), the keys from the URL or the
 * entity body, and for an entity group transaction (`$batch`) each operation of its changeset. It
 * forwards byte for byte and never alters an answer. One proxy per endpoint of a connection string:
 * the TableEndpoint always, the BlobEndpoint when there is one (large values).
 */
import { Agent, type IncomingHttpHeaders } from "node:http";
import { classifyRequest } from "./fault-proxy.js";
import { endToEnd, forwardRequest, listenLoopback } from "./loopback-proxy.js";

/** One operation of a `$batch` changeset. */
export interface BatchOperation {
  /** The HTTP method of the operation's request line (POST, PUT, MERGE, PATCH, DELETE). */
  verb: string;
  /** `insert`, `upsert`, `update` or `delete`, as `classifyRequest` names a lone request. */
  method: string;
  table: string;
  partitionKey: string | undefined;
  rowKey: string | undefined;
}

/** One HTTP request seen by the proxy. */
export interface WireRequest {
  /** `getEntity`, `queryPage`, `insert`, `upsert`, `update`, `delete`, `submitTransaction`, `createTable`, `putBlob`, `deleteBlob`, … */
  method: string;
  /** The table, or the blob container of a blob request. */
  table: string;
  partitionKey: string | undefined;
  rowKey: string | undefined;
  /** The changeset of a `$batch`, in the order sent. */
  operations?: BatchOperation[];
}

export interface RecordingProxy {
  /** The target's connection string with its endpoints pointing at the proxy. */
  readonly connectionString: string;
  /** The requests forwarded, in the order they arrived. */
  readonly requests: WireRequest[];
  close(): Promise<void>;
}

/** Starts a recording proxy in front of each endpoint of `targetConnectionString`. */
export async function startRecordingProxy(targetConnectionString: string): Promise<RecordingProxy> {
  const requests: WireRequest[] = [];
  const closers: Array<() => Promise<void>> = [];
  let connectionString = targetConnectionString;
  for (const name of ["TableEndpoint", "BlobEndpoint"] as const) {
    const target = endpointOf(targetConnectionString, name);
    if (target === undefined) continue;
    const blob = name === "BlobEndpoint";
    const { endpoint, close } = await proxy(new URL(target), (method, url, headers, body) => {
      requests.push(blob ? blobRequest(method, url) : tableRequest(method, url, headers, body));
    });
    closers.push(close);
    connectionString = connectionString.replace(
      new RegExp(`((?:^|;)\\s*${name}=)[^;]+`, "i"),
      `$1${endpoint}`,
    );
  }
  return {
    connectionString,
    requests,
    close: async () => {
      await Promise.all(closers.map((close) => close()));
    },
  };
}

type Recorder = (method: string, url: string, headers: IncomingHttpHeaders, body: Buffer) => void;

async function proxy(target: URL, record: Recorder): Promise<{ endpoint: string; close(): Promise<void> }> {
  const upstream = { target, agent: new Agent({ keepAlive: true, maxSockets: 64 }) };
  const { port, close } = await listenLoopback((request, response, body) => {
    const { method, url: path, headers } = request;
    // Recorded on arrival: the order the client sent them in.
    record(method ?? "GET", path ?? "/", headers, body);
    forwardRequest(upstream, { method, path, headers, body }).then(
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(response);
      },
      () => response.socket?.destroy(),
    );
  });
  return {
    endpoint: `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, "")}`,
    close: () => {
      upstream.agent.destroy();
      return close();
    },
  };
}

/** A Table service request: its table and keys from the URL (or the entity body of an insert). */
function tableRequest(method: string, url: string, headers: IncomingHttpHeaders, body: Buffer): WireRequest {
  const call = classifyRequest(method, url, headers);
  if (call === "submitTransaction") {
    const operations = changesetOf(body.toString("utf8"));
    const first = operations[0];
    return {
      method: call,
      table: first?.table ?? "",
      partitionKey: first?.partitionKey,
      rowKey: undefined,
      operations,
    };
  }
  return { method: call, ...addressOf(url, body.toString("utf8")) };
}

/** The table and keys a request line's URL and entity body name. */
function addressOf(url: string, body: string): Pick<WireRequest, "table" | "partitionKey" | "rowKey"> {
  const path = decodeURIComponent(new URL(url, "http://proxy").pathname);
  const resource = path.slice(path.lastIndexOf("/") + 1);
  const point = /^([^(]*)\(PartitionKey='((?:[^']|'')*)',\s*RowKey='((?:[^']|'')*)'\)$/.exec(resource);
  if (point) {
    const unquote = (key: string) => key.replaceAll("''", "'");
    return { table: point[1] ?? "", partitionKey: unquote(point[2] ?? ""), rowKey: unquote(point[3] ?? "") };
  }
  const table = resource.replace(/\(\)$/, "");
  // An insert names its keys in its entity body only.
  const key = (name: string) => {
    const match = new RegExp(`"${name}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(body)?.[1];
    return match === undefined ? undefined : (JSON.parse(`"${match}"`) as string);
  };
  return { table, partitionKey: key("PartitionKey"), rowKey: key("RowKey") };
}

/** The operations of a `$batch` body: each changeset part holds one HTTP request (line, headers, body). */
function changesetOf(body: string): BatchOperation[] {
  const operations: BatchOperation[] = [];
  for (const part of body.split(/^--changeset_[^\r\n]*$/m)) {
    const line = /^(POST|PUT|MERGE|PATCH|DELETE|GET) (\S+) HTTP\/1\.1\r?$/m.exec(part);
    if (!line) continue;
    const verb = line[1] as string;
    const headers = headersAfter(part.slice(line.index + line[0].length));
    const url = line[2] as string;
    operations.push({ verb, method: classifyRequest(verb, url, headers), ...addressOf(url, part) });
  }
  return operations;
}

/** The headers of a changeset part's request, up to its blank line. */
function headersAfter(text: string): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") {
      if (Object.keys(headers).length > 0) break;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** A Blob service request: `putBlob` or `deleteBlob` (anything else by its HTTP method) and its container. */
function blobRequest(method: string, url: string): WireRequest {
  const parsed = new URL(url, "http://proxy");
  // Path: /<account>/<container>/<blob name>.
  const [, , container = ""] = decodeURIComponent(parsed.pathname).split("/");
  const verb = method.toUpperCase();
  const isContainer = parsed.searchParams.get("restype") === "container";
  const call =
    verb === "PUT" && !isContainer
      ? "putBlob"
      : verb === "DELETE" && !isContainer
        ? "deleteBlob"
        : `blob ${verb}`;
  return {
    method: isContainer ? `container ${verb}` : call,
    table: container,
    partitionKey: undefined,
    rowKey: undefined,
  };
}

function endpointOf(connectionString: string, name: string): string | undefined {
  return new RegExp(`(?:^|;)\\s*${name}=([^;]+)`, "i").exec(connectionString)?.[1]?.trim();
}
