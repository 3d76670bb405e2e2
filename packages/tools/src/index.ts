export { BUILTIN_TOOL_NAMES, type BuiltinToolName } from "./builtin-tool-names.js";
export type { ImageBlock, ImageSource, TextBlock, ToolResultContentBlock } from "./content.js";
export {
  InvalidOptionError,
  LatticeError,
  ToolDefinitionError,
  ToolInputError,
  type ToolInputIssue,
  UnknownOptionError,
} from "./errors.js";
export { type ParseToolInputResult, parseToolInput } from "./parse-tool-input.js";
export { runTool } from "./run-tool.js";
export type {
  StandardSchemaFailure,
  StandardSchemaIssue,
  StandardSchemaOutput,
  StandardSchemaPathSegment,
  StandardSchemaProps,
  StandardSchemaResult,
  StandardSchemaSuccess,
  StandardSchemaTypes,
  StandardSchemaV1,
} from "./standard-schema.js";
export { toJsonSchema } from "./to-json-schema.js";
export {
  type CreateToolDefinitionOptions,
  createToolDefinition,
  TOOL_NAME_PATTERN,
  tool,
} from "./tool.js";
export type {
  AnyToolDefinition,
  JsonSchema,
  NeedsApproval,
  ToolContext,
  ToolDefinition,
  ToolHandler,
  ToolHandlerResult,
  ToolInputSchema,
  ToolKind,
  ToolOptions,
  ToolProgress,
  ToolRunInfo,
} from "./tool-definition.js";
export { errorToolResult, type ToolResult, toolResultText } from "./tool-result.js";
export { isToolSource, type ToolSource } from "./tool-source.js";
