import type { LanguageModelV2, LanguageModelV3, SharedV3ProviderOptions } from "@ai-sdk/provider";
import type { ModelProviderV1, ModelRequest, ModelStreamEvent } from "@lattice/providers";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { AI_SDK_PROVIDER_NAME } from "./ai-sdk-opaque-part.js";
import { callAiSdkModel } from "./call-ai-sdk-model.js";

/** An AI SDK language model the bridge accepts: specification `v2` (AI SDK 5) or `v3` (AI SDK 6). */
export type AiSdkLanguageModel = LanguageModelV2 | LanguageModelV3;

/** Options of {@link fromAiSdk}. Checked strictly: an unknown key throws. */
export interface FromAiSdkOptions {
  /**
   * Retries after the first attempt when the model call fails in a way the AI SDK marks
   * retryable (`APICallError.isRetryable`: 408, 409, 429, 5xx, connection failures), when the
   * stream is cut or sends a transient error, or on a timeout, as long as no event has reached
   * the agent. An integer ≥ 0. Default 2. (AI SDK models do not retry on their own; the AI
   * SDK's `generateText` does, and the bridge takes its place.)
   */
  readonly maxRetries?: number;
  /**
   * The longest wait for progress, in milliseconds: for the model to answer the call, then
   * between two stream parts. A positive number, `Infinity` for no timeout. Default 600000.
   */
  readonly timeoutMs?: number;
  /**
   * AI SDK provider options sent with every call, by provider name, for what Lattice's request
   * has no field for: thinking budgets, prompt caching, reasoning effort, safety settings.
   * For example `{ anthropic: { thinking: { type: "enabled", budgetTokens: 4000 } } }`.
   */
  readonly providerOptions?: SharedV3ProviderOptions;
  /** Extra HTTP headers sent with every call (HTTP-based providers only). */
  readonly headers?: Readonly<Record<string, string>>;
}

const OPTION_KEYS: ReadonlySet<string> = new Set([
  "maxRetries",
  "timeoutMs",
  "providerOptions",
  "headers",
]);
const PREFIX = "fromAiSdk():";

/**
 * Turns an AI SDK language model (`LanguageModelV2` from AI SDK 5 provider packages, or
 * `LanguageModelV3` from AI SDK 6 ones) into a Lattice `ModelProviderV1`, so any AI SDK
 * provider package (Google, Mistral, Bedrock, Ollama, OpenAI-compatible servers, …) drives a
 * Lattice agent, with Lattice's tool scheduler.
 *
 * The model's `specificationVersion` is checked at run time; the bridge imports nothing from
 * the AI SDK at run time. The model instance decides which model answers: the request's
 * `model` (the agent's `model` option) is not sent anywhere, and responses report the model id
 * the provider names. Streams with `doStream`, or calls `doGenerate` when the agent sets
 * `stream: false`. Reasoning and every other block keep the AI SDK provider metadata they came
 * with (see {@link AiSdkProviderMetadata}) and send it back on the next turn.
 *
 * @example
 * ```ts
 * import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
 * import { fromAiSdk } from "@lattice/ai-sdk";
 * import { createAgent } from "agent-lattice";
 *
 * const deepseek = createOpenAICompatible({
 *   name: "deepseek",
 *   baseURL: "https://api.deepseek.com/v1",
 *   apiKey: process.env.DEEPSEEK_API_KEY,
 *   includeUsage: true,
 * });
 * const agent = createAgent({ provider: fromAiSdk(deepseek("deepseek-chat")), model: "deepseek-chat" });
 * ```
 *
 * @param model - The AI SDK model, for example `google("gemini-2.5-flash")`.
 * @param options - {@link FromAiSdkOptions}.
 * @returns A provider named `"ai-sdk"` whose `baseURL` is `ai-sdk:<the model's provider>`.
 * @throws `InvalidOptionError` when `model` is not an AI SDK V2 or V3 language model (a string
 *   id, a V1 model of AI SDK 4) or an option has a bad value; `UnknownOptionError` for an
 *   unknown option. Model calls fail with `ProviderError`s whose messages name the model.
 */
export function fromAiSdk(
  model: AiSdkLanguageModel,
  options: FromAiSdkOptions = {},
): ModelProviderV1 {
  const version = checkModel(model);
  assertKnownOptions(options, OPTION_KEYS, PREFIX);
  const maxRetries = checkRetries(options.maxRetries);
  const timeoutMs = checkTimeout(options.timeoutMs);
  const providerOptions = checkRecord(options.providerOptions, "providerOptions");
  const headers = checkHeaders(options.headers);
  const provider = String(model.provider);
  const modelId = String(model.modelId);
  const endpoint = `ai-sdk:${provider}`;
  const settings = {
    model,
    version,
    context: { label: `AI SDK model "${modelId}" (${provider})`, endpoint, modelId },
    extras: { providerOptions, headers },
    maxRetries,
    timeoutMs,
  };
  return {
    specificationVersion: "v1",
    name: AI_SDK_PROVIDER_NAME,
    baseURL: endpoint,
    stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      return callAiSdkModel(settings, request);
    },
  };
}

function checkModel(model: unknown): "v2" | "v3" {
  if (typeof model === "string") {
    throw new InvalidOptionError(
      PREFIX,
      "model",
      `must be an AI SDK language model object such as google("gemini-2.5-flash"), received the string ${describeValue(model)}. Model id strings (the AI SDK's gateway) are not supported: create the model with its provider package.`,
    );
  }
  const candidate = model as Partial<LanguageModelV3> | null;
  if (
    candidate === null ||
    typeof candidate !== "object" ||
    typeof candidate.doStream !== "function" ||
    typeof candidate.doGenerate !== "function"
  ) {
    throw new InvalidOptionError(
      PREFIX,
      "model",
      `must be an AI SDK language model (an object with doStream and doGenerate, such as openai("gpt-4o")), received ${describeValue(model)}.`,
    );
  }
  const version = (candidate as { specificationVersion?: unknown }).specificationVersion;
  if (version === "v2" || version === "v3") return version;
  throw new InvalidOptionError(
    PREFIX,
    "model",
    `implements AI SDK language model specification ${describeValue(version)}, but the bridge speaks "v2" (AI SDK 5 provider packages) and "v3" (AI SDK 6). Upgrade the provider package.`,
  );
}

function checkRetries(value: unknown): number {
  if (value === undefined) return 2;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidOptionError(
      PREFIX,
      "maxRetries",
      `must be an integer ≥ 0 (0 for no retries), received ${describeValue(value)}. Omit it for the default (2).`,
    );
  }
  return value;
}

function checkTimeout(value: unknown): number {
  if (value === undefined) return 600_000;
  if (typeof value !== "number" || Number.isNaN(value) || value <= 0) {
    throw new InvalidOptionError(
      PREFIX,
      "timeoutMs",
      `must be a positive number of milliseconds (Infinity for no timeout), received ${describeValue(value)}. Omit it for the default (600000).`,
    );
  }
  return value;
}

function checkRecord<T>(value: T | undefined, name: string): T | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidOptionError(
      PREFIX,
      name,
      `must be an object, received ${describeValue(value)}.`,
    );
  }
  return value;
}

function checkHeaders(
  value: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> | undefined {
  const headers = checkRecord(value, "headers");
  if (headers === undefined) return undefined;
  for (const [name, text] of Object.entries(headers)) {
    if (typeof text !== "string") {
      throw new InvalidOptionError(
        PREFIX,
        "headers",
        `must map header names to strings; "${name}" is ${typeof text}.`,
      );
    }
  }
  return { ...headers };
}
