import type { ModelProviderV1 } from "@lattice/providers";
import type { AgentRuntime } from "./agent-runtime.js";
import type { AgentDefinition } from "./define-agent.js";
import {
  type CheckedAgentOptions,
  checkAgentOptions,
  hasOwnProvider,
  type InheritedModel,
  type PreparedAgent,
  prepareAgent,
} from "./prepare-agent.js";

/**
 * A member agent ready to run inside another run or a team: its definition checked once,
 * its runtime built per inherited provider and model and kept. Internal.
 */
export interface MemberRuntime {
  readonly definition: AgentDefinition;
  /**
   * The member's runtime: its own provider and model where its definition sets them, else
   * `inherited`'s.
   *
   * @throws `InvalidOptionError` when neither the definition nor `inherited` names a model.
   */
  runtimeFor(inherited: InheritedModel | undefined): AgentRuntime | Promise<AgentRuntime>;
}

/**
 * Checks a definition for use as a member (strict options, built-ins and their `cwd`) and
 * returns its runtime cache. Internal.
 *
 * @param definition - A definition from `defineAgent`.
 */
export function createMemberRuntime(definition: AgentDefinition): MemberRuntime {
  const checked: CheckedAgentOptions = checkAgentOptions(definition, "standard");
  const own = hasOwnProvider(checked.validated.options);
  const ownModel = checked.validated.options.model;
  // Keyed by model: runtimes on the member's own endpoint (or the environment's default).
  const ownEndpoint = new Map<string, PreparedAgent>();
  // Keyed by the inherited provider, then by model.
  const inheritedEndpoint = new WeakMap<ModelProviderV1, Map<string, PreparedAgent>>();

  const prepared = (inherited: InheritedModel | undefined): PreparedAgent => {
    const model = ownModel !== undefined && ownModel !== "" ? ownModel : (inherited?.model ?? "");
    let cache = ownEndpoint;
    if (!own && inherited !== undefined) {
      const known = inheritedEndpoint.get(inherited.provider);
      cache = known ?? new Map();
      if (known === undefined) inheritedEndpoint.set(inherited.provider, cache);
    }
    let entry = cache.get(model);
    if (entry === undefined) {
      entry = prepareAgent(checked, "standard", inherited);
      cache.set(model, entry);
    }
    return entry;
  };

  return Object.freeze({
    definition,
    runtimeFor: (inherited: InheritedModel | undefined) => prepared(inherited).getRuntime(),
  });
}
