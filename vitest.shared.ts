import { defineConfig } from "vitest/config";

/**
 * Settings every workspace project shares: resolve `@lattice/*` through the
 * `@lattice/source` export condition so tests run against `src/` without a build.
 *
 * The SSR conditions leave out "import": vitest passes them to its workers as
 * `node --conditions`, and with "import" there Node resolves a CommonJS package's own
 * `require()` of a dual package to its ESM build (pg's `require("pg-pool")` then fails with
 * "Class extends value [object Module]").
 */
export const sharedConfig = defineConfig({
  resolve: { conditions: ["@lattice/source", "import", "module", "node", "default"] },
  ssr: { resolve: { conditions: ["@lattice/source", "module", "node", "default"] } },
  test: {
    environment: "node",
    testTimeout: 20_000,
  },
});
