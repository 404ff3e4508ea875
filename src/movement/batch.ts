import { randomUUID } from "node:crypto";
import { entityUrl } from "../store/azure/batch-request.js";

/** How `import` writes a row: Insert, InsertOrReplace (upsert), or Update with `If-Match: *` (replace). */
export type ImportMode = "upsert" | "replace" | "insert";

const CRLF = "\r\n";
const OPERATION_HEADERS =
  "Content-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0\r\n";

/**
 * The part of a `$batch` changeset body that writes one entity (`body` from `entityBody`): its MIME
 * headers, request line, headers and JSON, without the boundary line (see `batchBody`).
 */
export function operationPart(
  tableUrl: string,
  mode: ImportMode,
  partitionKey: string,
  rowKey: string,
  body: string,
): string {
  const line =
    mode === "insert"
      ? `POST ${tableUrl} HTTP/1.1\r\n`
      : `PUT ${entityUrl(tableUrl, partitionKey, rowKey)} HTTP/1.1\r\n`;
  const ifMatch = mode === "replace" ? "If-Match: *\r\n" : "";
  return `Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n${line}${OPERATION_HEADERS}${ifMatch}\r\n${body}`;
}

/** The boundary lines around each part: `--changeset_<36-character UUID>` and a line break before and after. */
const PART_FRAME_BYTES = "\r\n--changeset_".length + 36 + 2;
/** The rest of the body: the batch's opening lines and both closing boundaries. */
export const BATCH_FRAME_BYTES = (
  `--batch_${"x".repeat(36)}\r\nContent-Type: multipart/mixed; boundary=changeset_${"x".repeat(36)}\r\n` +
  `\r\n--changeset_${"x".repeat(36)}--\r\n--batch_${"x".repeat(36)}--\r\n`
).length;

/**
 * The bytes one operation adds to a `$batch` request body (its part and boundary line). This body is
 * built here, so the count is exact: the service limits the whole body to 4 MiB.
 */
export function operationBytes(part: string): number {
  return Buffer.byteLength(part, "utf8") + PART_FRAME_BYTES;
}

/** A `$batch` request: its Content-Type and body (one changeset holding `parts`). */
export function batchBody(parts: readonly string[]): { contentType: string; body: string } {
  const batch = `batch_${randomUUID()}`;
  const changeset = `changeset_${randomUUID()}`;
  let body = `--${batch}${CRLF}Content-Type: multipart/mixed; boundary=${changeset}${CRLF}`;
  for (const part of parts) body += `${CRLF}--${changeset}${CRLF}${part}`;
  body += `${CRLF}--${changeset}--${CRLF}--${batch}--${CRLF}`;
  return { contentType: `multipart/mixed; boundary=${batch}`, body };
}

/** What a `$batch` answer says: every operation succeeded, or which one failed and why. */
export type BatchAnswer =
  | { ok: true }
  | {
      ok: false;
      status: number;
      code: string;
      message: string;
      /** The failed operation's index, when the service names it (`"3:The specified entity…"`). */
      index: number | undefined;
    };

/** Reads a `$batch` response body: the status of each sub-response, and the first failure's error. */
export function readBatchAnswer(body: string, operations: number): BatchAnswer {
  const statuses = [...body.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
  const failedAt = statuses.findIndex((s) => s < 200 || s >= 300);
  if (failedAt < 0 && statuses.length === operations) return { ok: true };
  if (failedAt < 0) {
    return {
      ok: false,
      status: 500,
      code: "",
      message: "the batch answer has no result per operation",
      index: undefined,
    };
  }
  const status = statuses[failedAt]!;
  const json = /\{[\s\S]*\}/.exec(body.slice(body.indexOf(`HTTP/1.1 ${status}`)));
  let code = "";
  let message = "";
  if (json !== null) {
    try {
      const error = (
        JSON.parse(json[0]) as { "odata.error"?: { code?: string; message?: { value?: string } } }
      )["odata.error"];
      code = error?.code ?? "";
      message = error?.message?.value ?? "";
    } catch {
      message = json[0].slice(0, 200);
    }
  }
  const index = /^(\d+):/.exec(message);
  return {
    ok: false,
    status,
    code,
    message: message.replace(/^\d+:/, "").split("\n")[0]!.trim(),
    index: index === null ? undefined : Number(index[1]),
  };
}
