import { defineProject, mergeConfig } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.js";

export default mergeConfig(
  sharedConfig,
  defineProject({
    test: {
      name: "@lattice/trace-viewer",
      // Installs Debian's Chromium when it is missing (as root), or says what to install;
      // then fails the run if a test wrote into the package's files (H30).
      globalSetup: ["./src/browser/ensure-chromium.ts", "./src/fixtures/package-tree-guard.ts"],
    },
  }),
);
