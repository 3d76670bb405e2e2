import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared.js";

export default defineConfig({
  ...packageBuild({
    index: "src/index.ts",
    http: "src/http/index.ts",
    testing: "src/testing/index.ts",
  }),
  // The entries share code through chunks, so `ProviderError` is one class whichever entry
  // point it is imported from (instanceof holds across "." and "./http").
  splitting: true,
});
