import { defineProject } from "vitest/config";
import { sharedConfig } from "../../vitest.shared.js";

// The shared settings, less the "module" condition: it picks @opentelemetry's ESM builds,
// whose imports have no file extensions, so Node cannot load them.
const conditions = ["@lattice/source", "import", "node", "default"];

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: { ...sharedConfig.test, name: "@lattice/otel" },
});
