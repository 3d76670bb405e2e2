/**
 * The `gen_ai.provider.name` a model name points to, by its well-known prefix, or `undefined`.
 * A guess for models served by their maker; pass `providerName` to `otelObserver` for a model
 * behind another endpoint (a gateway, an OpenAI-compatible server).
 */
export function inferProviderName(model: string): string | undefined {
  const name = model.toLowerCase();
  if (name.startsWith("claude")) return "anthropic";
  if (name.startsWith("gpt-") || name.startsWith("chatgpt") || /^o\d/.test(name)) return "openai";
  if (name.startsWith("deepseek")) return "deepseek";
  if (name.startsWith("gemini")) return "gcp.gemini";
  if (/^(mistral|ministral|magistral|codestral|devstral)/.test(name)) return "mistral_ai";
  if (name.startsWith("grok")) return "x_ai";
  return undefined;
}
