import { defineProject } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.js";

// The shared settings, less the "module" condition: the `ai` package's reader imports
// @opentelemetry/api, whose ESM build has imports without file extensions that Node cannot load.
const conditions = ["@lattice/source", "import", "node", "default"];

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: { ...sharedConfig.test, name: "@lattice/web" },
});
