import { defineProject, mergeConfig } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.js";

export default mergeConfig(
  sharedConfig,
  defineProject({
    test: {
      name: "@lattice-apps/web-chat",
      // Builds the page (vite build, into dist/) when it is missing or older than its sources.
      // The browser tests get Debian's Chromium from `ensureChromium()` of @lattice/test-servers.
      globalSetup: ["./src/test-setup/page-setup.ts"],
      // The page streams at the offline model's pace: wait for it generously.
      expect: { poll: { timeout: 10_000 } },
    },
  }),
);
