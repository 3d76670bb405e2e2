// @lattice/tools/internal: helpers the Lattice packages share with each other. Not part of the
// public API (the umbrella does not re-export them): they may change in any release.
export { assertKnownOptions, describeValue } from "./assert-known-options.js";
export { executeTool } from "./run-tool.js";
export { formatPath } from "./to-json-schema.js";
export { normalizeToolResult } from "./tool-result.js";
