/**
 * The examples run as a user runs them (`npx tsx examples/<name>.ts`, importing `tablekit` by name) and
 * print what they do. The tour (`npm start`) has its own test and runs in CI as `npm start`.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");

async function runExample(name: string): Promise<string> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", join("examples", name)], { cwd: root });
  return stdout;
}

describe("examples run on their own", () => {
  it("models.ts prints the keys its models give", async () => {
    const output = await runExample("models.ts");
    expect(output).toContain('{"partitionKey":"Sales","rowKey":"empid_000223"}');
    expect(output).toMatch(/"partitionKey":"emp_000223","rowKey":"\d{19}_e1"/);
  });

  it("key-vault-keys.ts seals a column and reads it back through the resolver", async () => {
    const output = await runExample("key-vault-keys.ts");
    expect(output).toMatch(/stored value: \S+… \(sealed/);
    expect(output).not.toContain("stored value: 1234");
    expect(output).toContain("read back   : 1234 (Key Vault calls: 2");
  });
});
