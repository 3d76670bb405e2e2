import type { AnyToolDefinition } from "@lattice/tools";
import { InvalidOptionError, isToolSource } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { AGENT_OPTIONS_PREFIX, type AgentOptions } from "./agent-options.js";

/**
 * Checks the options passed on to every model request: caching, thinking, tool choice, stops.
 *
 * @throws {@link InvalidOptionError} naming the first option with a value the SDK cannot send.
 */
export function checkModelControls(o: AgentOptions): void {
  if (o.promptCaching !== undefined && o.promptCaching !== "auto" && o.promptCaching !== "off") {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "promptCaching",
      `must be "auto" or "off", received ${describeValue(o.promptCaching)}.`,
    );
  }
  const thinking = o.thinking as { budgetTokens?: unknown } | undefined;
  if (
    thinking !== undefined &&
    (thinking === null ||
      typeof thinking !== "object" ||
      Object.keys(thinking).some((key) => key !== "budgetTokens") ||
      !Number.isSafeInteger(thinking.budgetTokens) ||
      (thinking.budgetTokens as number) < 1)
  ) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "thinking",
      `must be { budgetTokens: <integer> } (Anthropic wants at least 1024), received ${describeValue(o.thinking)}.`,
    );
  }
  if (
    o.reasoningEffort !== undefined &&
    !["low", "medium", "high"].includes(o.reasoningEffort as string)
  ) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "reasoningEffort",
      `must be "low", "medium" or "high", received ${describeValue(o.reasoningEffort)}.`,
    );
  }
  const choice = o.toolChoice as { type?: unknown; name?: unknown } | undefined;
  if (choice !== undefined) {
    const valid =
      choice !== null &&
      typeof choice === "object" &&
      (choice.type === "auto" || choice.type === "any" || choice.type === "none"
        ? Object.keys(choice).every((key) => key === "type")
        : choice.type === "tool" &&
          typeof choice.name === "string" &&
          (o.tools ?? []).some(
            (entry) => isToolSource(entry) || (entry as AnyToolDefinition).name === choice.name,
          ));
    if (!valid) {
      throw new InvalidOptionError(
        AGENT_OPTIONS_PREFIX,
        "toolChoice",
        `must be { type: "auto" }, { type: "any" }, { type: "none" } or { type: "tool", name } naming one of the agent's tools, received ${describeValue(o.toolChoice)}.`,
      );
    }
  }
  if (
    o.stopSequences !== undefined &&
    (!Array.isArray(o.stopSequences) ||
      o.stopSequences.some((stop) => typeof stop !== "string" || stop === ""))
  ) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "stopSequences",
      `must be an array of non-empty strings, received ${describeValue(o.stopSequences)}.`,
    );
  }
}
