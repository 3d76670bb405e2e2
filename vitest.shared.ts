import { defineConfig } from "vitest/config";

/**
 * Settings every workspace project shares: resolve `@lattice/*` through the
 * `@lattice/source` export condition so tests run against `src/` without a build.
 */
export const sharedConfig = defineConfig({
  resolve: { conditions: ["@lattice/source", "import", "module", "node", "default"] },
  ssr: { resolve: { conditions: ["@lattice/source", "import", "module", "node", "default"] } },
  test: {
    environment: "node",
    testTimeout: 20_000,
  },
});
