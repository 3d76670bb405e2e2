import { defineProject, mergeConfig } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.js";

export default mergeConfig(
  sharedConfig,
  defineProject({
    test: {
      name: "@lattice/trace-viewer",
      // Fails the run if a test wrote into the package's files (H30). The browser tests get
      // Debian's Chromium from `ensureChromium()` of @lattice/test-servers.
      globalSetup: ["./src/fixtures/package-tree-guard.ts"],
    },
  }),
);
