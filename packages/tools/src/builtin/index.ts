export { BUILTIN_TOOL_NAMES, type BuiltinToolName } from "../builtin-tool-names.js";
export {
  BASH_MAX_TIMEOUT_MS,
  type BashToolCaps,
  type BashToolInput,
  type BashToolOptions,
  bashTool,
} from "./bash-tool.js";
export { BuiltinToolError } from "./builtin-tool-error.js";
export { type BuiltinToolsOptions, builtinTools } from "./builtin-tools.js";
export { type EditToolInput, type EditToolOptions, editTool } from "./edit-tool.js";
export {
  type GlobToolCaps,
  type GlobToolInput,
  type GlobToolOptions,
  globTool,
} from "./glob-tool.js";
export {
  type GrepToolCaps,
  type GrepToolInput,
  type GrepToolOptions,
  grepTool,
} from "./grep-tool.js";
export { type LsToolCaps, type LsToolInput, type LsToolOptions, lsTool } from "./ls-tool.js";
export {
  type ReadToolCaps,
  type ReadToolInput,
  type ReadToolOptions,
  readTool,
} from "./read-tool.js";
export {
  type ResolvedAddress,
  type WebFetchResolver,
  type WebFetchToolCaps,
  type WebFetchToolInput,
  type WebFetchToolOptions,
  webFetchTool,
} from "./web-fetch-tool.js";
export type { WorkspaceOptions } from "./workspace.js";
export { type WriteToolInput, type WriteToolOptions, writeTool } from "./write-tool.js";
