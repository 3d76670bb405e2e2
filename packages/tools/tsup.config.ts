import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared.js";

export default defineConfig(
  packageBuild({
    index: "src/index.ts",
    builtin: "src/builtin/index.ts",
    internal: "src/internal.ts",
  }),
);
