// The Key Vault example's structural client is what `@azure/keyvault-keys` offers: a real
// `CryptographyClient` fits it unchanged. (The package is in node_modules as a dependency of the dev
// tools, not of tablekit; this file is the only place that names it.)
import type { CryptographyClient } from "@azure/keyvault-keys";
import { expectTypeOf } from "vitest";
import type { KeyWrapClient } from "../../examples/key-vault-keys.js";

expectTypeOf<CryptographyClient>().toExtend<KeyWrapClient>();
