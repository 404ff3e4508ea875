import { AzureNamedKeyCredential, TableServiceClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { startTableServer, type TableServer } from "../../src/index.js";
import { ACCOUNT, errorOf, KEY, signedFetch } from "./signed-fetch.js";

// `x-ms-version`: Azure refuses a version it does not know with 400 InvalidHeaderValue ("The value for
// one of the HTTP headers is not in the correct format."; azure-sdk-for-net #45302 shows the answer,
// with no x-ms-version of its own); `skipApiVersionCheck` accepts any YYYY-MM-DD, as Azurite's
// `--skipApiVersionCheck`.
let strict: TableServer;
let lenient: TableServer;
let counter = 0;

beforeAll(async () => {
  [strict, lenient] = await Promise.all([
    startTableServer({ port: 0 }),
    startTableServer({ port: 0, skipApiVersionCheck: true }),
  ]);
});
afterAll(async () => {
  await Promise.all([strict.close(), lenient.close()]);
});

async function createTable(
  server: TableServer,
  version: string,
): Promise<{ name: string; answer: Response }> {
  const name = `versions${++counter}`;
  const answer = await signedFetch(`${server.url}/Tables`, {
    method: "POST",
    body: JSON.stringify({ TableName: name }),
    headers: { "x-ms-version": version, Prefer: "return-no-content" },
  });
  return { name, answer };
}

async function tableNames(server: TableServer): Promise<string[]> {
  const answer = await signedFetch(`${server.url}/Tables`);
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { value: { TableName: string }[] }).value.map((t) => t.TableName);
}

describe("x-ms-version", () => {
  test("the version the installed @azure/data-tables sends is accepted and answered", async () => {
    const service = new TableServiceClient(strict.url, new AzureNamedKeyCredential(ACCOUNT, KEY), {
      allowInsecureConnection: true,
    });
    let sent: string | undefined;
    let answered: string | undefined;
    service.pipeline.addPolicy({
      name: "record-version",
      async sendRequest(request, next) {
        sent = request.headers.get("x-ms-version");
        const response = await next(request);
        answered = response.headers.get("x-ms-version");
        return response;
      },
    });
    await service.createTable(`versions${++counter}`);
    expect(sent).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(answered).toBe(sent);
  });

  test.each(["2009-09-19", "2015-04-05", "2021-12-02", "2026-06-06"])(
    "%s (a version of Azure's versioning docs) is accepted and echoed",
    async (version) => {
      const { name, answer } = await createTable(strict, version);
      expect(answer.status).toBe(204);
      expect(answer.headers.get("x-ms-version")).toBe(version);
      expect(await tableNames(strict)).toContain(name);
    },
  );

  test.each(["2019-02-03", "2099-01-01", "1999-01-01", "invalid", "2019-2-2"])(
    "%s is 400 InvalidHeaderValue with no version in the answer, and nothing is done",
    async (version) => {
      const { name, answer } = await createTable(strict, version);
      const error = await errorOf(answer);
      expect(error).toMatchObject({
        status: 400,
        code: "InvalidHeaderValue",
        bodyCode: "InvalidHeaderValue",
      });
      expect(error.body).toContain("The value for one of the HTTP headers is not in the correct format.");
      expect(answer.headers.get("x-ms-version")).toBeNull();
      expect(await tableNames(strict)).not.toContain(name);
    },
  );
});

describe("skipApiVersionCheck", () => {
  test("a version newer than the known ones is accepted and echoed", async () => {
    const { name, answer } = await createTable(lenient, "2099-01-01");
    expect(answer.status).toBe(204);
    expect(answer.headers.get("x-ms-version")).toBe("2099-01-01");
    expect(await tableNames(lenient)).toContain(name);
  });

  test("a value that is no version is still 400 InvalidHeaderValue", async () => {
    const { name, answer } = await createTable(lenient, "invalid");
    expect(await errorOf(answer)).toMatchObject({ status: 400, code: "InvalidHeaderValue" });
    expect(await tableNames(lenient)).not.toContain(name);
  });

  test("a value other than a boolean is a ValidationError", async () => {
    await expect(
      startTableServer({ port: 0, skipApiVersionCheck: "yes" as unknown as boolean }),
    ).rejects.toThrow(ValidationError);
  });
});
