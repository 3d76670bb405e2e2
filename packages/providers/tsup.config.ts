import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared.js";

// The entries share code through chunks (packageBuild splits), so `ProviderError` is one class
// whichever entry point it is imported from.
export default defineConfig(
  packageBuild({
    index: "src/index.ts",
    http: "src/http/index.ts",
    testing: "src/testing/index.ts",
    internal: "src/internal.ts",
  }),
);
