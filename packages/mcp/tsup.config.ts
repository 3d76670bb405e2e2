import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared.js";

export default defineConfig({
  ...packageBuild({
    index: "src/index.ts",
    "bin/lattice-mcp": "src/bin/lattice-mcp.ts",
  }),
  // The bin and the entry share the server code through chunks.
  splitting: true,
});
