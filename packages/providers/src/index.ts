export { type AnthropicOptions, anthropic } from "./anthropic/anthropic.js";
export type {
  ContentBlock,
  ModelMessage,
  OpaqueBlock,
  RedactedThinkingBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
} from "./content-blocks.js";
export type { ModelProviderV1 } from "./model-provider.js";
export type {
  AnthropicClearThinkingEdit,
  AnthropicClearToolUsesEdit,
  AnthropicContextEdit,
  AnthropicContextManagement,
  ModelOutputFormat,
  ModelRequest,
  ModelThinking,
  ModelToolChoice,
  ModelToolSpec,
  PromptCachingMode,
  ReasoningEffort,
} from "./model-request.js";
export type {
  ModelContextEdit,
  ModelResponse,
  ModelUsage,
  StopReason,
} from "./model-response.js";
export type { ModelStreamEvent, StreamBlockStart } from "./model-stream-event.js";
export {
  type OpenAiCompatibleOptions,
  openaiCompatible,
} from "./openai/openai-compatible.js";
export type { MaxTokensParameter } from "./openai/to-openai-body.js";
export {
  ProviderError,
  type ProviderErrorCode,
  type ProviderErrorDetails,
} from "./provider-error.js";
export { type ResolvedApiKey, resolveApiKey } from "./resolve-api-key.js";
export { MAX_TOOL_INPUT_DEPTH, MAX_TOOL_INPUT_LENGTH } from "./transport/parse-tool-input.js";
