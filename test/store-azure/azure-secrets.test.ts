import { inspect } from "node:util";
import { AzureNamedKeyCredential, AzureSASCredential, generateAccountSas } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { translateAzureError } from "../../src/store/azure/azure-errors.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { parseConnectionString } from "../../src/store/azure/connection-string.js";
import { redactSecrets } from "../../src/util/redact-secrets.js";
import { azuriteConnectionString } from "../support/azurite.js";
import { type FaultServer, startFaultServer } from "../support/fault-server.js";
import { failureOf as failure } from "../support/rejection.js";

/** Everything a log line could show of an error: message, string form, inspected form with causes. */
function everythingShown(error: Error): string {
  return [error.message, String(error), inspect(error, { depth: 8 }), JSON.stringify(error)].join("\n");
}

// A forged signature and key: valid base64, long enough to be unmistakable in any output.
const FORGED_SIG = "Zm9yZ2VkLXNpZ25hdHVyZS1mb3ItdGFibGVraXQtdGVzdHM=";
const FORGED_KEY = "Zm9yZ2VkLWFjY291bnQta2V5LWZvci10YWJsZWtpdC10ZXN0cy0xMjM0NTY3ODkw";

describe("credentials never appear in error output", () => {
  const account = () => parseConnectionString(azuriteConnectionString());

  it("a SAS with a forged signature (403 from the service)", async () => {
    const { url, credential } = account();
    const sas = generateAccountSas(credential as AzureNamedKeyCredential, { resourceTypes: "sco" }).replace(
      /sig=[^&]*/,
      `sig=${encodeURIComponent(FORGED_SIG)}`,
    );
    const store = AzureStore.fromConnectionString(`TableEndpoint=${url};SharedAccessSignature=${sas}`);
    const error = await failure(() => store.getEntity("abc", "p", "r"));
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ statusCode: 403, serviceCode: "AuthorizationFailure" });
    expect(error.message).toContain("Server failed to authenticate the request");
    const shown = everythingShown(error);
    expect(shown).not.toContain(FORGED_SIG);
    expect(shown).not.toContain(encodeURIComponent(FORGED_SIG));
  });

  it("a wrong account key (403 from the service)", async () => {
    const { url } = account();
    const store = new AzureStore(url, new AzureNamedKeyCredential("devstoreaccount1", FORGED_KEY));
    const error = await failure(() => store.insert("abc", { partitionKey: "p", rowKey: "r" }));
    expect(error).toMatchObject({ statusCode: 403 });
    expect(everythingShown(error)).not.toContain(FORGED_KEY);
  });

  describe("network failures of a SAS-in-URL store", () => {
    let server: FaultServer;
    beforeAll(async () => {
      server = await startFaultServer("hang");
    });
    afterAll(() => server.close());

    it("timeouts and resets", async () => {
      const store = new AzureStore(
        `${server.endpoint}?sv=2020-01-01&sig=${encodeURIComponent(FORGED_SIG)}`,
        new AzureSASCredential(`sv=2020-01-01&sig=${encodeURIComponent(FORGED_SIG)}`),
        { requestTimeoutMs: 100 },
      );
      server.mode = "hang";
      const timeout = await failure(() => store.getEntity("abc", "p", "r"));
      expect(timeout).toMatchObject({ serviceCode: "Timeout" });
      server.mode = "reset";
      const reset = await failure(() => store.queryPage("abc", {}));
      expect(reset).toMatchObject({ serviceCode: "ECONNRESET" });
      for (const error of [timeout, reset]) {
        const shown = everythingShown(error);
        expect(shown).not.toContain(FORGED_SIG);
        expect(shown).not.toContain(encodeURIComponent(FORGED_SIG));
      }
    });
  });

  it("an error whose own message carries a signature or key", () => {
    const raw = new Error(
      `Cannot connect to http://example.com/t?sv=1&sig=${FORGED_SIG} (AccountKey=${FORGED_KEY};Authorization: SharedKeyLite acct:${FORGED_SIG})`,
    );
    const error = translateAzureError(raw, { operation: "getEntity", table: "t" });
    const shown = everythingShown(error);
    expect(shown).not.toContain(FORGED_SIG);
    expect(shown).not.toContain(FORGED_KEY);
  });
});

describe("redactSecrets", () => {
  it.each([
    [
      "https://a.table.core.windows.net/t?sv=2020&sig=abc%2Bdef%3D&se=x",
      "https://a.table.core.windows.net/t?sv=2020&sig=***&se=x",
    ],
    ["SharedAccessSignature=sv=1&sig=abc;TableEndpoint=x", "SharedAccessSignature=***;TableEndpoint=x"],
    ["AccountName=a;AccountKey=abc==;", "AccountName=a;AccountKey=***;"],
    ["Authorization: SharedKeyLite acct:abc+/=", "Authorization: SharedKeyLite acct:***"],
    ["Authorization: Bearer eyJ0eXAi.eyJhdWQi.sig-_", "Authorization: Bearer ***"],
    ["sig%3Dabc", "sig%3D***"],
    ["nothing secret here: design, signal, sigma=1", "nothing secret here: design, signal, sigma=1"],
  ])("%s", (input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
  });

  it("removes exact secret values", () => {
    expect(redactSecrets(`key ${FORGED_KEY} here`, [FORGED_KEY])).toBe("key *** here");
  });
});
