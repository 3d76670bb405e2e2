import { anthropic, type ModelProviderV1 } from "@lattice/providers";
import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { AGENT_OPTIONS_PREFIX, type AgentOptions } from "./agent-options.js";

/**
 * Checks the `provider` option, when set: a model provider of specification `"v1"`, not
 * combined with `apiKey` or `baseURL` (which configure the default provider).
 *
 * @param o - The options, whose other keys are known and whose strings are checked.
 * @throws {@link InvalidOptionError} for a value that is not a v1 provider, or a combination.
 */
export function checkProviderOption(o: AgentOptions): void {
  if (o.provider === undefined) return;
  const provider = o.provider as Partial<ModelProviderV1> | null;
  if (provider === null || typeof provider !== "object" || typeof provider.stream !== "function") {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "provider",
      `must be a model provider such as anthropic({...}) or openaiCompatible({...}), received ${describeValue(o.provider)}.`,
    );
  }
  if (provider.specificationVersion !== "v1") {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "provider",
      `implements provider specification ${describeValue(provider.specificationVersion)}, but this SDK speaks "v1". Upgrade the SDK or the provider package.`,
    );
  }
  for (const key of ["apiKey", "baseURL"] as const) {
    if (o[key] !== undefined) {
      throw new InvalidOptionError(
        AGENT_OPTIONS_PREFIX,
        key,
        `cannot be combined with "provider": pass it to the provider factory instead, for example openaiCompatible({ ${key} }).`,
      );
    }
  }
}

/**
 * The provider an agent talks to: `options.provider`, or `anthropic({ apiKey, baseURL })`.
 *
 * @param options - Validated options.
 */
export function resolveProvider(options: AgentOptions): ModelProviderV1 {
  if (options.provider !== undefined) return options.provider;
  return anthropic({
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
  });
}
